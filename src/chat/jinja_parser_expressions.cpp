#include <charconv>
#include <cmath>
#include <set>

#include "chat/jinja_parser_internal.h"

namespace eagle2::jinja::detail {
namespace {

// A numeric literal's value ("12", "-3", "0.5"), locale-independent; past double's range it is
// infinite, as JavaScript's Number() makes it.
double number_value(const std::string& text) {
  double v = 0;
  const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(begin, text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range) return text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  return v;
}

}  // namespace

// --- Expressions ---
NodePtr Parser::parse_expression() {
  Nest nest(*this);
  const int at = line();
  NodePtr value = parse_or();
  if (!is_word("if")) return value;
  ++cur_;
  NodePtr cond = parse_or();
  if (is_word("else")) {
    ++cur_;
    auto n = node(NodeType::Ternary, at);
    n->a = std::move(value), n->b = std::move(cond), n->c = parse_expression();
    return done(std::move(n));
  }
  auto n = node(NodeType::Select, at);
  n->a = std::move(value), n->b = std::move(cond);
  return done(std::move(n));
}

// a, b, c as a tuple; one expression alone. `primary` for loop targets (names only).
NodePtr Parser::parse_expression_sequence(bool primary) {
  const int at = line();
  NodePtr first = primary ? parse_primary() : parse_expression();
  if (!is(Tok::Comma)) return first;
  auto n = node(NodeType::TupleLit, at);
  n->list.push_back(std::move(first));
  while (is(Tok::Comma)) {
    ++cur_;
    n->list.push_back(primary ? parse_primary() : parse_expression());
  }
  return done(std::move(n));
}

NodePtr Parser::binary(const std::string& op, NodePtr left, NodePtr right, int at) {
  auto n = node(NodeType::Binary, at);
  n->name = op, n->a = std::move(left), n->b = std::move(right);
  return done(std::move(n));
}

NodePtr Parser::parse_or() {
  NodePtr left = parse_and();
  while (is_word("or")) {
    const int at = line();
    ++cur_;
    left = binary("or", std::move(left), parse_and(), at);
  }
  return left;
}

NodePtr Parser::parse_and() {
  NodePtr left = parse_not();
  while (is_word("and")) {
    const int at = line();
    ++cur_;
    left = binary("and", std::move(left), parse_not(), at);
  }
  return left;
}

NodePtr Parser::parse_not() {
  if (!is_word("not")) return parse_comparison();
  Nest nest(*this);
  auto n = node(NodeType::Unary, line());
  ++cur_;
  n->name = "not";
  n->a = parse_not();
  return done(std::move(n));
}

NodePtr Parser::parse_comparison() {
  NodePtr left = parse_additive();
  while (true) {
    const int at = line();
    std::string op;
    if (is_word("not") && is_word("in", 1)) {
      op = "not in", cur_ += 2;
    } else if (is_word("in")) {
      op = "in", ++cur_;
    } else if (is(Tok::Comparison)) {
      op = tokens_[cur_++].value;
    } else {
      return left;
    }
    left = binary(op, std::move(left), parse_additive(), at);
  }
}

NodePtr Parser::parse_additive() {
  NodePtr left = parse_multiplicative();
  while (is(Tok::Additive)) {
    const int at = line();
    const std::string op = tokens_[cur_++].value;
    left = binary(op, std::move(left), parse_multiplicative(), at);
  }
  return left;
}

NodePtr Parser::parse_multiplicative() {
  NodePtr left = parse_power();
  while (is(Tok::Multiplicative)) {
    const int at = line();
    const std::string op = tokens_[cur_++].value;
    left = binary(op, std::move(left), parse_power(), at);
  }
  return left;
}

// Left-associative, as in Jinja: 2 ** 3 ** 2 is 64.
NodePtr Parser::parse_power() {
  NodePtr left = parse_test();
  while (is(Tok::Power)) {
    const int at = line();
    ++cur_;
    left = binary("**", std::move(left), parse_test(), at);
  }
  return left;
}

NodePtr Parser::parse_test() {
  NodePtr operand = parse_filter();
  while (is_word("is")) {
    auto n = node(NodeType::Test, line());
    ++cur_;
    if (is_word("not")) n->flag = true, ++cur_;
    n->name = expect(Tok::Identifier, "a test name after 'is'").value;
    if (is(Tok::OpenParen)) n->list = parse_args(false);
    n->a = std::move(operand);
    operand = done(std::move(n));
  }
  return operand;
}

NodePtr Parser::parse_filter() {
  NodePtr operand = parse_unary();
  while (is(Tok::Pipe)) {
    auto n = node(NodeType::Filter, line());
    ++cur_;
    n->name = expect(Tok::Identifier, "a filter name after '|'").value;
    if (is(Tok::OpenParen)) {
      n->list = parse_args(false);
      n->flag = true;
    }
    n->a = std::move(operand);
    operand = done(std::move(n));
  }
  return operand;
}

NodePtr Parser::parse_unary() {
  if ((is(Tok::Unary) || is(Tok::Additive)) && (peek()->value == "-" || peek()->value == "+")) {
    Nest nest(*this);
    auto n = node(NodeType::Unary, line());
    n->name = tokens_[cur_++].value;
    n->a = parse_unary();
    return done(std::move(n));
  }
  NodePtr member = parse_member(parse_primary());
  if (is(Tok::OpenParen)) return parse_calls(std::move(member));
  return member;
}

NodePtr Parser::parse_calls(NodePtr callee) {
  while (is(Tok::OpenParen)) {
    auto n = node(NodeType::Call, line());
    n->a = std::move(callee);
    n->list = parse_args(false);
    callee = parse_member(done(std::move(n)));
  }
  return callee;
}

// (a, b=1, *rest, **named) in a call; (a, b=default) as parameters.
std::vector<NodePtr> Parser::parse_args(bool parameters) {
  Nest nest(*this);
  expect(Tok::OpenParen, "'('");
  std::vector<NodePtr> args;
  std::set<std::string> names;
  bool keyword_seen = false, spread_seen = false;
  while (!is(Tok::CloseParen)) {
    if (!peek()) error("expected ')' to close the argument list, found " + describe(nullptr));
    const int at = line();
    const bool kw_spread = is(Tok::Power), spread = is_op(Tok::Multiplicative, "*");
    if ((kw_spread || spread) && parameters) error("a parameter list cannot unpack arguments");
    if (kw_spread) {
      ++cur_;
      auto n = node(NodeType::KeywordSpread, at);
      n->a = parse_expression();
      args.push_back(done(std::move(n)));
      if (is(Tok::Comma)) ++cur_;
      if (!is(Tok::CloseParen)) error("'**' must unpack the last argument");
      break;
    }
    NodePtr arg;
    if (spread) {
      if (spread_seen) error("only one '*' argument may be unpacked");
      spread_seen = true;
      ++cur_;
      arg = node(NodeType::Spread, at);
      arg->a = parse_expression();
      arg = done(std::move(arg));
    } else {
      arg = parse_expression();
      if (is(Tok::Equals)) {
        ++cur_;
        if (arg->type != NodeType::Identifier)
          error(parameters ? "a parameter must be a name" : "a keyword argument must be a name");
        auto kw = node(NodeType::KeywordArg, at);
        kw->name = arg->name;
        kw->a = parse_expression();
        arg = done(std::move(kw));
      }
      if (parameters) {
        if (arg->type != NodeType::Identifier && arg->type != NodeType::KeywordArg)
          error("a parameter must be a name");
        if (!names.insert(arg->name).second) error("duplicate parameter '" + arg->name + "'");
      }
      if (arg->type == NodeType::KeywordArg) {
        keyword_seen = true;
      } else if (keyword_seen) {
        error(parameters ? "a parameter without a default follows one with a default"
                         : "a positional argument follows a keyword argument");
      }
    }
    args.push_back(std::move(arg));
    if (is(Tok::Comma)) ++cur_;
  }
  ++cur_;  // )
  return args;
}

NodePtr Parser::parse_member(NodePtr object) {
  while (is(Tok::Dot) || is(Tok::OpenBracket)) {
    const int at = line();
    if (is(Tok::Dot)) {
      ++cur_;
      auto n = node(NodeType::Member, at);
      const Token* t = peek();
      if (t && t->type == Tok::Number && t->value.find('.') == std::string::npos &&
          t->value[0] != '-' && t->value[0] != '+') {
        auto key = node(NodeType::Literal, at);
        key->literal = Value::integer(number_value(t->value));
        n->b = std::move(key);
      } else if (t && t->type == Tok::Identifier) {
        auto key = node(NodeType::Literal, at);
        key->literal = Value::string(std::make_shared<const std::string>(t->value));
        n->b = std::move(key);
      } else {
        error("expected a name after '.', found " + describe(t));
      }
      ++cur_;
      n->a = std::move(object);
      object = done(std::move(n));
      continue;
    }
    ++cur_;  // [
    object = parse_subscript(std::move(object), at);
  }
  return object;
}

// [key] or a slice [start:stop:step] with any part omitted.
NodePtr Parser::parse_subscript(NodePtr object, int at) {
  Nest nest(*this);
  std::vector<NodePtr> parts;
  bool slice = false;
  while (!is(Tok::CloseBracket)) {
    if (!peek()) error("expected ']', found " + describe(nullptr));
    if (is(Tok::Colon)) {
      parts.push_back(nullptr);
      ++cur_;
      slice = true;
    } else {
      parts.push_back(parse_expression());
      if (is(Tok::Colon))
        ++cur_, slice = true;
      else if (!is(Tok::CloseBracket))
        error("expected ']' or ':', found " + describe(peek()));
    }
  }
  ++cur_;  // ]
  if (parts.empty()) syntax_error(name_, at, "[] needs an index or a slice");
  if (slice) {
    if (parts.size() > 3) syntax_error(name_, at, "a slice has at most three parts");
    parts.resize(3);
    auto n = node(NodeType::Slice, at);
    n->a = std::move(object);
    n->list = std::move(parts);
    return done(std::move(n));
  }
  auto n = node(NodeType::Member, at);
  n->a = std::move(object);
  n->b = std::move(parts[0]);
  n->flag = true;  // computed
  return done(std::move(n));
}

NodePtr Parser::parse_primary() {
  const Token* t = peek();
  if (!t) error("expected an expression, found " + describe(nullptr));
  const int at = t->line;
  switch (t->type) {
    case Tok::Number: {
      ++cur_;
      auto n = node(NodeType::Literal, at);
      const double v = number_value(t->value);
      n->literal = t->value.find('.') != std::string::npos ? Value::floating(v) : Value::integer(v);
      return n;
    }
    case Tok::String: {  // adjacent strings join: 'a' 'b' is 'ab'
      std::string text;
      while (is(Tok::String)) text += tokens_[cur_++].value;
      auto n = node(NodeType::Literal, at);
      n->literal = Value::string(std::make_shared<const std::string>(std::move(text)));
      return n;
    }
    case Tok::Identifier: {
      ++cur_;
      auto n = node(NodeType::Identifier, at);
      n->name = t->value;
      return n;
    }
    case Tok::OpenParen: {
      Nest nest(*this);
      ++cur_;
      NodePtr inner = parse_expression_sequence(false);
      expect(Tok::CloseParen, "')'");
      return inner;
    }
    case Tok::OpenBracket:
    case Tok::OpenBrace: {
      Nest nest(*this);
      const bool array = t->type == Tok::OpenBracket;
      const Tok close = array ? Tok::CloseBracket : Tok::CloseBrace;
      ++cur_;
      auto n = node(array ? NodeType::ArrayLit : NodeType::ObjectLit, at);
      while (!is(close)) {
        if (!peek())
          error(std::string("expected '") + (array ? "]" : "}") + "', found " + describe(nullptr));
        n->list.push_back(parse_expression());
        if (!array) {
          expect(Tok::Colon, "':' between a key and its value");
          n->list.push_back(parse_expression());
        }
        if (is(Tok::Comma)) ++cur_;
      }
      ++cur_;
      return done(std::move(n));
    }
    default:
      error("expected an expression, found " + describe(t));
  }
}

}  // namespace eagle2::jinja::detail
