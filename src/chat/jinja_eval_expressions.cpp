#include "chat/jinja_eval.h"
#include "chat/jinja_filters.h"
#include "chat/jinja_operators.h"
#include "core/error.h"

namespace eagle2::jinja {

Value Evaluator::eval(const Node& n, Scope* scope) {
  try {
    Depth depth(*this);
    heap_.step();
    return eval_expression(n, scope);
  } catch (const Failure& f) {
    fail(program_.name, ":", n.line, ": ", f.what());
  }
}

Value Evaluator::eval_expression(const Node& n, Scope* scope) {
  switch (n.type) {
    case NodeType::Literal:
      return n.literal;
    case NodeType::Identifier: {
      const Value* v = scope->lookup(n.name);
      return v ? *v : Value();
    }
    case NodeType::ArrayLit:
    case NodeType::TupleLit: {
      std::vector<Value> items;
      items.reserve(n.list.size());
      for (const NodePtr& item : n.list) items.push_back(eval(*item, scope));
      return heap_.array(std::move(items), n.type == NodeType::TupleLit);
    }
    case NodeType::ObjectLit: {
      Object o;
      for (size_t i = 0; i + 1 < n.list.size(); i += 2) {
        const Value key = eval(*n.list[i], scope);
        if (!key.is(Kind::String))
          throw Failure(std::string("mapping keys must be strings, not ") + kind_name(key.kind()));
        o.set(key.str(), eval(*n.list[i + 1], scope));
      }
      return heap_.object(std::move(o));
    }
    case NodeType::Member: {
      const Value object = eval(*n.a, scope);
      const Value key = n.flag ? eval(*n.b, scope) : n.b->literal;
      return get_member(object, key, heap_);
    }
    case NodeType::Slice: {
      const Value object = eval(*n.a, scope);
      Value parts[3];
      for (size_t i = 0; i < 3; ++i)
        if (n.list[i]) parts[i] = eval(*n.list[i], scope);
      return get_slice(object, parts[0], parts[1], parts[2], heap_);
    }
    case NodeType::Call:
      return eval_call(n, scope);
    case NodeType::Filter: {
      const Value operand = eval(*n.a, scope);
      return apply_filter(n.name, operand, eval_args(n.list, scope), heap_);
    }
    case NodeType::Test: {
      const Value operand = eval(*n.a, scope);
      return Value::boolean(apply_test(n.name, operand, eval_args(n.list, scope)) != n.flag);
    }
    case NodeType::Unary:
      return unary_op(n.name, eval(*n.a, scope));
    case NodeType::Binary: {
      const Value left = eval(*n.a, scope);
      if (n.name == "and") return truthy(left) ? eval(*n.b, scope) : left;
      if (n.name == "or") return truthy(left) ? left : eval(*n.b, scope);
      return binary_op(n.name, left, eval(*n.b, scope), heap_);
    }
    case NodeType::Select:
      return truthy(eval(*n.b, scope)) ? eval(*n.a, scope) : Value();
    case NodeType::Ternary:
      return truthy(eval(*n.b, scope)) ? eval(*n.a, scope) : eval(*n.c, scope);
    default:
      throw Failure("this can only appear in an argument list");
  }
}

Args Evaluator::eval_args(const std::vector<NodePtr>& list, Scope* scope) {
  Args args;
  // Like the reference (and Python), every positional argument is evaluated before the keywords.
  for (const NodePtr& arg : list) {
    if (arg->type == NodeType::Spread) {
      const Value v = eval(*arg->a, scope);
      if (!v.is(Kind::Array))
        throw Failure(std::string("cannot unpack ") + kind_name(v.kind()) + " with *");
      args.positional.insert(args.positional.end(), v.array().items.begin(), v.array().items.end());
    } else if (arg->type != NodeType::KeywordArg && arg->type != NodeType::KeywordSpread) {
      args.positional.push_back(eval(*arg, scope));
    }
  }
  auto add = [&](const std::string& name, Value v) {
    if (args.keyword_arg(name)) throw Failure("keyword argument '" + name + "' is given twice");
    args.keyword.emplace_back(name, std::move(v));
  };
  for (const NodePtr& arg : list) {
    if (arg->type == NodeType::KeywordArg) {
      add(arg->name, eval(*arg->a, scope));
    } else if (arg->type == NodeType::KeywordSpread) {
      const Value v = eval(*arg->a, scope);
      if (!v.is(Kind::Object))
        throw Failure(std::string("cannot unpack ") + kind_name(v.kind()) + " with **");
      for (const auto& [k, value] : v.object().entries()) add(k, value);
    }
  }
  return args;
}

Value Evaluator::eval_call(const Node& n, Scope* scope) {
  const Args args = eval_args(n.list, scope);
  const Value fn = eval(*n.a, scope);
  return call(fn, args, scope, *n.a);
}

Value Evaluator::call(const Value& fn, const Args& args, Scope* calling, const Node& callee) {
  if (!fn.is(Kind::Function)) {
    // x.append(...) and the like: name the missing method rather than "cannot call undefined".
    if (callee.type == NodeType::Member && !callee.flag && callee.b->literal.is(Kind::String) &&
        fn.is_undefined())
      throw Failure("cannot call '" + callee.b->literal.str() + "': there is no such method here");
    throw Failure(std::string("cannot call ") + kind_name(fn.kind()));
  }
  const Function& f = fn.function();
  switch (f.type) {
    case Function::Type::Global:
      return call_global(f, args, heap_, today_);
    case Function::Type::Method:
      return call_method(f, args, heap_);
    case Function::Type::Macro:
      return call_body(*f.node, "macro '" + f.name + "'", args, calling);
    case Function::Type::Caller:
      return call_body(*f.node, "the call block's caller()", args, f.scope);
  }
  return Value();
}

Value Evaluator::call_body(const Node& definition, const std::string& display_name,
                           const Args& args, Scope* parent) {
  Scope* scope = heap_.scope(parent);
  const std::vector<NodePtr>& params = definition.list;
  std::vector<std::pair<std::string, Value>> keywords = args.keyword;
  std::vector<const Node*> pending_defaults;
  for (size_t i = 0; i < params.size(); ++i) {
    const Node& p = *params[i];
    const std::string& name = p.name;
    Value value;
    bool given = i < args.positional.size();
    if (given) {
      value = args.positional[i];
    } else {
      for (auto it = keywords.begin(); it != keywords.end(); ++it) {
        if (it->first != name) continue;
        value = it->second, given = true;
        keywords.erase(it);
        break;
      }
    }
    if (!given && p.type == NodeType::KeywordArg) pending_defaults.push_back(&p);
    scope->vars.set(name, value);
  }
  const int special = special_arguments(definition);
  if (special & 2) {
    Object kwargs;
    for (auto& [k, v] : keywords) kwargs.set(k, v);
    scope->vars.set("kwargs", heap_.object(std::move(kwargs)));
  } else if (!keywords.empty()) {
    throw Failure(display_name + " has no parameter '" + keywords.front().first + "'");
  }
  if (special & 1) {
    std::vector<Value> extra;
    for (size_t i = params.size(); i < args.positional.size(); ++i)
      extra.push_back(args.positional[i]);
    scope->vars.set("varargs", heap_.array(std::move(extra)));
  } else if (args.positional.size() > params.size()) {
    throw Failure(display_name + " takes at most " + std::to_string(params.size()) +
                  " argument(s), got " + std::to_string(args.positional.size()));
  }
  // Defaults are evaluated last, in the macro's scope, so they can use the parameters before them.
  for (const Node* p : pending_defaults) scope->vars.set(p->name, eval(*p->a, scope));
  std::string out;
  exec_block(definition.body, scope, out);
  return heap_.str(std::move(out));
}

namespace {

void find_special(const Node& n, int* found) {
  if (n.type == NodeType::Identifier) {
    if (n.name == "varargs") *found |= 1;
    if (n.name == "kwargs") *found |= 2;
  }
  for (const Node* c : {n.a.get(), n.b.get(), n.c.get()})
    if (c) find_special(*c, found);
  for (const auto* list : {&n.list, &n.body, &n.alt})
    for (const NodePtr& c : *list)
      if (c) find_special(*c, found);
  for (const auto& [cond, body] : n.branches) {
    find_special(*cond, found);
    for (const NodePtr& c : body) find_special(*c, found);
  }
}

}  // namespace

int Evaluator::special_arguments(const Node& definition) {
  auto it = special_.find(&definition);
  if (it != special_.end()) return it->second;
  int found = 0;
  for (const NodePtr& c : definition.body) find_special(*c, &found);
  special_.emplace(&definition, found);
  return found;
}

}  // namespace eagle2::jinja
