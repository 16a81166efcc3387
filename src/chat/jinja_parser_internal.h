// The parser's state and helpers, shared by its two halves: statements (jinja_parser.cpp) and
// expressions (jinja_parser_expressions.cpp). Private to src/chat.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"
#include "chat/jinja_limits.h"

namespace eagle2::jinja::detail {

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string_view name, const Limits& limits)
      : tokens_(std::move(tokens)), name_(name), limits_(limits) {}

  std::vector<NodePtr> run();

 private:
  // --- Token access ---
  const Token* peek(size_t ahead = 0) const {
    return cur_ + ahead < tokens_.size() ? &tokens_[cur_ + ahead] : nullptr;
  }
  bool is(Tok type, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t && t->type == type;
  }
  bool is_word(std::string_view word, size_t ahead = 0) const {
    const Token* t = peek(ahead);
    return t && t->type == Tok::Identifier && t->value == word;
  }
  bool is_op(Tok type, std::string_view op) const { return is(type) && peek()->value == op; }
  // {% name ... with name among `names`.
  bool is_statement(std::initializer_list<std::string_view> names) const {
    if (!is(Tok::OpenStatement) || !is(Tok::Identifier, 1)) return false;
    return std::find(names.begin(), names.end(), peek(1)->value) != names.end();
  }
  int line() const {
    if (const Token* t = peek()) return t->line;
    return tokens_.empty() ? 1 : tokens_.back().line;
  }
  [[noreturn]] void error(const std::string& what) const { syntax_error(name_, line(), what); }
  const Token& expect(Tok type, const std::string& what) {
    if (!is(type)) error("expected " + what + ", found " + describe(peek()));
    return tokens_[cur_++];
  }
  void expect_word(std::string_view word, const std::string& what) {
    if (!is_word(word)) error("expected " + what + ", found " + describe(peek()));
    ++cur_;
  }

  // --- Nesting bounds ---
  struct Nest {
    explicit Nest(Parser& p) : p(p) {
      if (++p.depth_ > p.limits_.max_nesting)
        p.error("the template nests deeper than " + std::to_string(p.limits_.max_nesting) +
                " levels");
    }
    ~Nest() { --p.depth_; }
    Parser& p;
  };

  NodePtr node(NodeType type, int at) {
    auto n = std::make_unique<Node>();
    n->type = type;
    n->line = at;
    return n;
  }
  // Sets the subtree height from the children and enforces the bound on it.
  NodePtr done(NodePtr n);

  // Statements (jinja_parser.cpp)
  NodePtr parse_any();
  std::vector<NodePtr> parse_body(std::initializer_list<std::string_view> ends,
                                  const std::string& opener, int opened_at);
  void close_block(std::string_view end);
  NodePtr parse_statement();
  NodePtr parse_set(int at);
  void check_assignable(const Node& target);
  NodePtr parse_if(int at);
  NodePtr parse_for(int at);
  std::vector<NodePtr> parse_function_body(std::string_view end, const std::string& opener, int at);
  NodePtr parse_macro(int at);
  NodePtr parse_call_block(int at);
  NodePtr parse_filter_block(int at);

  // Expressions (jinja_parser_expressions.cpp)
  NodePtr parse_expression();
  NodePtr parse_expression_sequence(bool primary);
  NodePtr binary(const std::string& op, NodePtr left, NodePtr right, int at);
  NodePtr parse_or();
  NodePtr parse_and();
  NodePtr parse_not();
  NodePtr parse_comparison();
  NodePtr parse_additive();
  NodePtr parse_multiplicative();
  NodePtr parse_power();
  NodePtr parse_test();
  NodePtr parse_filter();
  NodePtr parse_unary();
  NodePtr parse_calls(NodePtr callee);
  std::vector<NodePtr> parse_args(bool parameters);
  NodePtr parse_member(NodePtr object);
  NodePtr parse_subscript(NodePtr object, int at);
  NodePtr parse_primary();

  std::vector<Token> tokens_;
  std::string_view name_;
  const Limits& limits_;
  size_t cur_ = 0;
  int depth_ = 0;
  int loops_ = 0;  // enclosing for loops in the current macro or template
};

}  // namespace eagle2::jinja::detail
