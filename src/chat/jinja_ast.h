// The syntax tree of a template. One node type with named parts keeps the parser and evaluator
// short; each kind below says which parts it uses (the rest stay empty).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace eagle2::jinja {

enum class NodeType {
  // Statements
  Text,         // literal: the text
  Output,       // a: the expression of {{ a }}
  If,           // branches: (condition, body) for if and each elif; alt: the else body
  For,          // a: target (Identifier or Tuple); b: iterable; c: the `if` filter or null;
                // body; alt: the else body
  Set,          // a: target (Identifier, Tuple or Member); b: value, or null with body (block set)
  Macro,        // name; list: parameters (Identifier, or KeywordArg with a default); body
  CallBlock,    // a: the Call of the macro; list: the caller's parameters; body
  FilterBlock,  // a: a Filter node without operand; body
  Break,
  Continue,
  // Expressions
  Literal,        // literal: a string, integer or float
  Identifier,     // name
  ArrayLit,       // list: items
  TupleLit,       // list: items
  ObjectLit,      // list: key, value, key, value, ...
  Member,         // a: object; b: the key expression (name for a.b is a string Literal)
  Slice,          // a: object; list: start, stop, step (null where omitted)
  Call,           // a: callee; list: arguments (expressions, KeywordArg, Spread, KeywordSpread)
  Filter,         // a: operand; name; list: arguments (as Call); flag: written with parentheses
  Test,           // a: operand; name; flag: `is not`
  Unary,          // name: "not", "-" or "+"; a: operand
  Binary,         // name: the operator; a, b: operands
  Select,         // a: value; b: condition (`a if b` without else: undefined when false)
  Ternary,        // a: value if true; b: condition; c: value if false
  KeywordArg,     // name; a: value (or a parameter's default)
  Spread,         // a: *list argument
  KeywordSpread,  // a: **mapping argument
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeType type;
  int line = 0;
  int height = 1;  // of the subtree, bounded by Limits::max_nesting
  std::string name;
  Value literal;  // Text and Literal: strings are shared, so evaluating one copies nothing
  bool flag = false;
  NodePtr a, b, c;
  std::vector<NodePtr> list;
  std::vector<NodePtr> body, alt;
  std::vector<std::pair<NodePtr, std::vector<NodePtr>>> branches;
};

// A parsed template; immutable, so one can be rendered by several threads at once.
struct Program {
  std::string name;  // for error messages
  std::vector<NodePtr> body;
};

}  // namespace eagle2::jinja
