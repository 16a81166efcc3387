// The interpreter: runs the statements of a syntax tree into text and evaluates its expressions,
// with the reference's scoping (a for loop and a macro call open a scope; if does not; a macro
// sees the variables of its caller's scope) and its loop control (break and continue discard the
// output of the iteration they end). Private to src/chat; jinja_template.h is the interface.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chat/jinja_ast.h"
#include "chat/jinja_globals.h"
#include "chat/jinja_methods.h"
#include "chat/jinja_value.h"

namespace eagle2::jinja {

class Evaluator {
 public:
  Evaluator(const Program& program, Heap& heap, const Date& today)
      : program_(program), heap_(heap), today_(today) {}

  std::string run(Scope* globals);

  enum class Flow { Normal, Break, Continue };

  // Statements (jinja_eval.cpp). Output goes to `out`; Break/Continue travel up to the loop.
  Flow exec_block(const std::vector<NodePtr>& body, Scope* scope, std::string& out);
  Flow exec(const Node& n, Scope* scope, std::string& out);

  // Expressions (jinja_eval_expressions.cpp).
  Value eval(const Node& n, Scope* scope);

 private:
  Flow exec_statement(const Node& n, Scope* scope, std::string& out);
  Flow exec_for(const Node& n, Scope* scope, std::string& out);
  Flow exec_set(const Node& n, Scope* scope);
  void exec_call_block(const Node& n, Scope* scope, std::string& out);
  void assign(const Node& target, const Value& value, Scope* scope);
  void append(std::string& out, std::string_view text) const;

  Value eval_expression(const Node& n, Scope* scope);
  Value eval_call(const Node& n, Scope* scope);
  Args eval_args(const std::vector<NodePtr>& list, Scope* scope);
  Value call(const Value& fn, const Args& args, Scope* calling, const Node& callee);
  // A macro, or a call block's caller: parameters bound in a new scope under `parent`.
  Value call_body(const Node& definition, const std::string& display_name, const Args& args,
                  Scope* parent);
  // Whether a macro or call block body reads `varargs` (bit 0) or `kwargs` (bit 1).
  int special_arguments(const Node& definition);

  // Counts nested evaluations against Limits::max_depth.
  struct Depth {
    explicit Depth(Evaluator& e);
    ~Depth() { --e.depth_; }
    Evaluator& e;
  };

  const Program& program_;
  Heap& heap_;
  const Date& today_;
  int depth_ = 0;
  std::unordered_map<const Node*, int> special_;
};

}  // namespace eagle2::jinja
