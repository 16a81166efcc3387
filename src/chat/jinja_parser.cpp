#include "chat/jinja_parser.h"

#include <set>

#include "chat/jinja_parser_internal.h"
#include "core/error.h"

namespace eagle2::jinja {
namespace detail {

std::vector<NodePtr> Parser::run() {
  std::vector<NodePtr> body;
  while (cur_ < tokens_.size())
    if (NodePtr node = parse_any()) body.push_back(std::move(node));
  return body;
}

// Sets the subtree height from the children and enforces the bound on it.
NodePtr Parser::done(NodePtr n) {
  int h = 0;
  auto see = [&](const NodePtr& c) {
    if (c) h = std::max(h, c->height);
  };
  see(n->a), see(n->b), see(n->c);
  for (const auto& c : n->list) see(c);
  for (const auto& c : n->body) see(c);
  for (const auto& c : n->alt) see(c);
  for (const auto& [cond, body] : n->branches) {
    see(cond);
    for (const auto& c : body) see(c);
  }
  n->height = h + 1;
  if (n->height > limits_.max_nesting)
    syntax_error(
        name_, n->line,
        "the template nests deeper than " + std::to_string(limits_.max_nesting) + " levels");
  return n;
}

// --- Statements ---
NodePtr Parser::parse_any() {
  const Token& t = *peek();
  switch (t.type) {
    case Tok::Comment:
      ++cur_;
      return nullptr;
    case Tok::Text: {
      ++cur_;
      auto n = node(NodeType::Text, t.line);
      n->literal = Value::string(std::make_shared<const std::string>(t.value));
      return n;
    }
    case Tok::OpenExpression: {
      ++cur_;
      auto n = node(NodeType::Output, t.line);
      n->a = parse_expression();
      expect(Tok::CloseExpression, "'}}'");
      return done(std::move(n));
    }
    case Tok::OpenStatement:
      return parse_statement();
    default:
      error("unexpected " + describe(&t));
  }
}

std::vector<NodePtr> Parser::parse_body(std::initializer_list<std::string_view> ends,
                                        const std::string& opener, int opened_at) {
  std::vector<NodePtr> body;
  while (!is_statement(ends)) {
    if (!peek())
      syntax_error(name_, opened_at,
                   opener + " is never closed with {% " + std::string(*(ends.end() - 1)) + " %}");
    if (NodePtr n = parse_any()) body.push_back(std::move(n));
  }
  return body;
}
void Parser::close_block(std::string_view end) {
  expect(Tok::OpenStatement, "'{%'");
  expect_word(end, std::string("'") + std::string(end) + "'");
  expect(Tok::CloseStatement, "'%}'");
}

NodePtr Parser::parse_statement() {
  Nest nest(*this);
  const int at = line();
  ++cur_;  // {%
  if (!is(Tok::Identifier))
    error("expected a statement name after '{%', found " + describe(peek()));
  const std::string word = peek()->value;
  ++cur_;
  if (word == "set") return parse_set(at);
  if (word == "if") return parse_if(at);
  if (word == "for") return parse_for(at);
  if (word == "macro") return parse_macro(at);
  if (word == "call") return parse_call_block(at);
  if (word == "filter") return parse_filter_block(at);
  if (word == "break" || word == "continue") {
    if (loops_ == 0) syntax_error(name_, at, "{% " + word + " %} outside a for loop");
    expect(Tok::CloseStatement, "'%}'");
    return node(word == "break" ? NodeType::Break : NodeType::Continue, at);
  }
  static const std::set<std::string> kEnds = {"elif",   "else",     "endif",   "endfor",
                                              "endset", "endmacro", "endcall", "endfilter"};
  if (kEnds.count(word)) syntax_error(name_, at, "unexpected {% " + word + " %}");
  syntax_error(name_, at, "unknown statement {% " + word + " %}");
}

NodePtr Parser::parse_set(int at) {
  auto n = node(NodeType::Set, at);
  n->a = parse_expression_sequence(false);
  check_assignable(*n->a);
  if (is(Tok::Equals)) {
    ++cur_;
    n->b = parse_expression_sequence(false);
  } else {
    expect(Tok::CloseStatement, "'=' or '%}' in {% set %}");
    n->body = parse_body({"endset"}, "{% set %}", at);
    ++cur_, ++cur_;  // {% endset
  }
  expect(Tok::CloseStatement, "'%}'");
  return done(std::move(n));
}

void Parser::check_assignable(const Node& target) {
  if (target.type == NodeType::Identifier) return;
  if (target.type == NodeType::TupleLit) {
    for (const auto& item : target.list)
      if (item->type != NodeType::Identifier)
        syntax_error(name_, target.line, "{% set %} can unpack only into names");
    return;
  }
  if (target.type == NodeType::Member && !target.flag) return;  // ns.attribute
  syntax_error(name_, target.line,
               "{% set %} assigns to a name, names (a, b) or a namespace attribute (ns.x)");
}

NodePtr Parser::parse_if(int at) {
  auto n = node(NodeType::If, at);
  while (true) {
    NodePtr cond = parse_expression();
    expect(Tok::CloseStatement, "'%}' after the condition");
    std::vector<NodePtr> body = parse_body({"elif", "else", "endif"}, "{% if %}", at);
    n->branches.emplace_back(std::move(cond), std::move(body));
    if (!is_word("elif", 1)) break;
    cur_ += 2;
  }
  if (is_word("else", 1)) {
    cur_ += 2;
    expect(Tok::CloseStatement, "'%}' after else");
    n->alt = parse_body({"endif"}, "{% if %}", at);
  }
  close_block("endif");
  return done(std::move(n));
}

NodePtr Parser::parse_for(int at) {
  auto n = node(NodeType::For, at);
  n->a = parse_expression_sequence(true);
  if (n->a->type != NodeType::Identifier &&
      !(n->a->type == NodeType::TupleLit &&
        std::all_of(n->a->list.begin(), n->a->list.end(),
                    [](const NodePtr& x) { return x->type == NodeType::Identifier; })))
    syntax_error(name_, at, "{% for %} needs a name or names (a, b) before 'in'");
  expect_word("in", "'in' after the loop variable");
  NodePtr iterable = parse_expression();
  if (iterable->type == NodeType::Select) {  // for x in xs if condition
    n->b = std::move(iterable->a);
    n->c = std::move(iterable->b);
  } else {
    n->b = std::move(iterable);
  }
  expect(Tok::CloseStatement, "'%}' after the loop");
  ++loops_;
  n->body = parse_body({"endfor", "else"}, "{% for %}", at);
  --loops_;
  if (is_word("else", 1)) {
    cur_ += 2;
    expect(Tok::CloseStatement, "'%}' after else");
    n->alt = parse_body({"endfor"}, "{% for %}", at);  // break here leaves the outer loop
  }
  close_block("endfor");
  return done(std::move(n));
}

// A macro or call block body is its own function: break/continue cannot reach a loop outside.
std::vector<NodePtr> Parser::parse_function_body(std::string_view end, const std::string& opener,
                                                 int at) {
  const int saved = loops_;
  loops_ = 0;
  std::vector<NodePtr> body = parse_body({end}, opener, at);
  loops_ = saved;
  close_block(end);
  return body;
}

NodePtr Parser::parse_macro(int at) {
  auto n = node(NodeType::Macro, at);
  n->name = expect(Tok::Identifier, "the macro's name").value;
  n->list = parse_args(true);
  expect(Tok::CloseStatement, "'%}' after the macro's parameters");
  n->body = parse_function_body("endmacro", "{% macro %}", at);
  return done(std::move(n));
}

NodePtr Parser::parse_call_block(int at) {
  auto n = node(NodeType::CallBlock, at);
  if (is(Tok::OpenParen)) n->list = parse_args(true);
  const Token& callee = expect(Tok::Identifier, "the name of the macro to call");
  auto call = node(NodeType::Call, callee.line);
  auto id = node(NodeType::Identifier, callee.line);
  id->name = callee.value;
  call->a = std::move(id);
  call->list = parse_args(false);
  n->a = done(std::move(call));
  expect(Tok::CloseStatement, "'%}' after the call");
  n->body = parse_function_body("endcall", "{% call %}", at);
  return done(std::move(n));
}

NodePtr Parser::parse_filter_block(int at) {
  auto n = node(NodeType::FilterBlock, at);
  auto f = node(NodeType::Filter, at);
  f->name = expect(Tok::Identifier, "a filter name").value;
  if (is(Tok::OpenParen)) {
    f->list = parse_args(false);
    f->flag = true;
  }
  n->a = done(std::move(f));
  expect(Tok::CloseStatement, "'%}' after the filter");
  n->body = parse_body({"endfilter"}, "{% filter %}", at);
  close_block("endfilter");
  return done(std::move(n));
}

}  // namespace detail

std::unique_ptr<Program> parse(std::string_view source, std::string_view name,
                               const Limits& limits) {
  if (source.size() > limits.max_template_bytes)
    fail(name, ": the template has ", source.size(), " bytes, more than the limit of ",
         limits.max_template_bytes);
  auto program = std::make_unique<Program>();
  program->name = std::string(name);
  program->body = detail::Parser(tokenize(source, name), name, limits).run();
  return program;
}

}  // namespace eagle2::jinja
