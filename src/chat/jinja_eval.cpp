#include "chat/jinja_eval.h"

#include "chat/jinja_filters.h"
#include "chat/jinja_json.h"
#include "chat/jinja_parser.h"
#include "chat/jinja_template.h"
#include "core/error.h"

namespace eagle2::jinja {

Evaluator::Depth::Depth(Evaluator& e) : e(e) {
  if (++e.depth_ > e.heap_.limits().max_depth) {
    --e.depth_;  // the destructor will not run for a throwing constructor
    throw Failure("the template recursed deeper than " +
                  std::to_string(e.heap_.limits().max_depth) + " levels (a macro calling itself?)");
  }
}

std::string Evaluator::run(Scope* globals) {
  std::string out;
  exec_block(program_.body, globals, out);
  return out;
}

void Evaluator::append(std::string& out, std::string_view text) const {
  heap_.check_string_size(out.size() + text.size());
  out.append(text);
}

Evaluator::Flow Evaluator::exec_block(const std::vector<NodePtr>& body, Scope* scope,
                                      std::string& out) {
  for (const NodePtr& n : body) {
    const Flow flow = exec(*n, scope, out);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Evaluator::Flow Evaluator::exec(const Node& n, Scope* scope, std::string& out) {
  // A failure gets the line of the innermost node it passes; outer nodes let the Error through.
  try {
    Depth depth(*this);
    heap_.step();
    return exec_statement(n, scope, out);
  } catch (const Failure& f) {
    fail(program_.name, ":", n.line, ": ", f.what());
  }
}

Evaluator::Flow Evaluator::exec_statement(const Node& n, Scope* scope, std::string& out) {
  switch (n.type) {
    case NodeType::Text:
      append(out, n.literal.str());
      return Flow::Normal;
    case NodeType::Output: {
      const Value v = eval(*n.a, scope);
      if (!v.is_undefined() && !v.is(Kind::None)) append(out, display(v, heap_.limits()));
      return Flow::Normal;
    }
    case NodeType::If:
      for (const auto& [cond, body] : n.branches)
        if (truthy(eval(*cond, scope))) return exec_block(body, scope, out);
      return exec_block(n.alt, scope, out);
    case NodeType::For:
      return exec_for(n, scope, out);
    case NodeType::Set:
      return exec_set(n, scope);
    case NodeType::Macro: {
      Function f;
      f.type = Function::Type::Macro;
      f.name = n.name;
      f.node = &n;
      scope->vars.set(n.name, heap_.function(std::move(f)));
      return Flow::Normal;
    }
    case NodeType::CallBlock:
      exec_call_block(n, scope, out);
      return Flow::Normal;
    case NodeType::FilterBlock: {
      std::string body;
      const Flow flow = exec_block(n.body, scope, body);
      if (flow != Flow::Normal) return flow;
      const Node& filter = *n.a;
      const Value v = apply_filter(filter.name, heap_.str(std::move(body)),
                                   eval_args(filter.list, scope), heap_);
      if (!v.is_undefined() && !v.is(Kind::None)) append(out, display(v, heap_.limits()));
      return Flow::Normal;
    }
    case NodeType::Break:
      return Flow::Break;
    case NodeType::Continue:
      return Flow::Continue;
    default:
      throw Failure("an expression cannot stand as a statement");  // the parser never makes one
  }
}

// Binds a for loop's name(s) to one item: `for a, b in pairs` unpacks lists of two.
static void bind_loop_target(const Node& target, const Value& item, Scope* scope) {
  if (target.type == NodeType::Identifier) {
    scope->vars.set(target.name, item);
    return;
  }
  if (!item.is(Kind::Array))
    throw Failure(std::string("cannot unpack ") + kind_name(item.kind()) + " into " +
                  std::to_string(target.list.size()) + " loop variables");
  const auto& values = item.array().items;
  if (values.size() != target.list.size())
    throw Failure("cannot unpack " + std::to_string(values.size()) + " values into " +
                  std::to_string(target.list.size()) + " loop variables");
  for (size_t i = 0; i < values.size(); ++i) scope->vars.set(target.list[i]->name, values[i]);
}

Evaluator::Flow Evaluator::exec_for(const Node& n, Scope* scope, std::string& out) {
  Scope* loop_scope = heap_.scope(scope);
  const Value iterable = eval(*n.b, loop_scope);
  Value list = iterable;
  if (iterable.is(Kind::Object)) {  // a mapping loops over its keys
    std::vector<Value> keys;
    for (const auto& [k, v] : iterable.object().entries()) keys.push_back(heap_.str(k));
    list = heap_.array(std::move(keys));
  } else if (!iterable.is(Kind::Array)) {
    throw Failure(std::string("cannot loop over ") + kind_name(iterable.kind()));
  }
  const std::vector<Value>* items = &list.array().items;
  std::vector<Value> selected;
  if (n.c) {  // for x in xs if condition: filtered before the loop, so loop.length counts the kept
    Scope* test_scope = heap_.scope(loop_scope);
    for (const Value& item : *items) {
      bind_loop_target(*n.a, item, test_scope);
      if (truthy(eval(*n.c, test_scope))) selected.push_back(item);
    }
    items = &selected;
  }
  const size_t count = items->size();
  bool iterated = false;
  // One `loop` object updated in place: a fresh one per iteration (as the reference makes) would
  // keep every iteration's object alive in the heap until the render ends.
  Object* loop = heap_.new_object();
  loop_scope->vars.set("loop", Value::of(loop));
  for (size_t i = 0; i < count; ++i) {
    heap_.step();
    const double index = static_cast<double>(i), length = static_cast<double>(count);
    loop->set("index", Value::integer(index + 1));
    loop->set("index0", Value::integer(index));
    loop->set("revindex", Value::integer(length - index));
    loop->set("revindex0", Value::integer(length - index - 1));
    loop->set("first", Value::boolean(i == 0));
    loop->set("last", Value::boolean(i + 1 == count));
    loop->set("length", Value::integer(length));
    loop->set("previtem", i > 0 ? (*items)[i - 1] : Value());
    loop->set("nextitem", i + 1 < count ? (*items)[i + 1] : Value());
    loop_scope->vars.set("loop",
                         Value::of(loop));  // the body may have set `loop` to something else
    bind_loop_target(*n.a, (*items)[i], loop_scope);
    const size_t mark = out.size();
    const Flow flow = exec_block(n.body, loop_scope, out);
    if (flow != Flow::Normal) {
      out.resize(mark);  // the reference drops the output of an iteration that breaks or continues
      if (flow == Flow::Break) break;
      continue;
    }
    iterated = true;
  }
  // The else block runs when no iteration completed (the reference counts one that ended in
  // break or continue as not done).
  if (!iterated) return exec_block(n.alt, loop_scope, out);
  return Flow::Normal;
}

Evaluator::Flow Evaluator::exec_set(const Node& n, Scope* scope) {
  Value value;
  if (n.b) {
    value = eval(*n.b, scope);
  } else {
    std::string body;
    const Flow flow = exec_block(n.body, scope, body);
    if (flow != Flow::Normal) return flow;
    value = heap_.str(std::move(body));
  }
  assign(*n.a, value, scope);
  return Flow::Normal;
}

void Evaluator::assign(const Node& target, const Value& value, Scope* scope) {
  switch (target.type) {
    case NodeType::Identifier:
      scope->vars.set(target.name, value);
      return;
    case NodeType::TupleLit: {
      if (!value.is(Kind::Array))
        throw Failure(std::string("cannot unpack ") + kind_name(value.kind()) + " in {% set %}");
      const auto& values = value.array().items;
      if (values.size() != target.list.size())
        throw Failure(std::string(values.size() < target.list.size() ? "too few" : "too many") +
                      " values to unpack in {% set %} (expected " +
                      std::to_string(target.list.size()) + ", got " +
                      std::to_string(values.size()) + ")");
      for (size_t i = 0; i < values.size(); ++i) scope->vars.set(target.list[i]->name, values[i]);
      return;
    }
    case NodeType::Member: {
      const Value object = eval(*target.a, scope);
      if (!object.is(Kind::Namespace))
        throw Failure(std::string("cannot set an attribute of ") + kind_name(object.kind()) +
                      "; only a namespace() takes {% set ns.name = ... %}");
      if (!target.b->literal.is(Kind::String))
        throw Failure("a namespace attribute must be a name");
      object.object().set(target.b->literal.str(), value);
      return;
    }
    default:
      throw Failure("cannot assign to this expression");  // the parser allows no other
  }
}

void Evaluator::exec_call_block(const Node& n, Scope* scope, std::string& out) {
  const Node& call_node = *n.a;
  const Args args = eval_args(call_node.list, scope);
  const Value callee = eval(*call_node.a, scope);
  Function caller;
  caller.type = Function::Type::Caller;
  caller.name = "caller";
  caller.node = &n;
  caller.scope = scope;
  Scope* env = heap_.scope(scope);
  env->vars.set("caller", heap_.function(std::move(caller)));
  const Value result = call(callee, args, env, *call_node.a);
  if (!result.is_undefined() && !result.is(Kind::None))
    append(out, display(result, heap_.limits()));
}

// --- Template ---

Template::Template(std::string_view source, std::string name, const Limits& limits)
    : program_(parse(source, name, limits)), limits_(limits) {}

const std::string& Template::name() const {
  return program_->name;
}

std::string Template::render(const nlohmann::ordered_json& variables, const Date& today) const {
  if (!variables.is_object()) fail(name(), ": the variables must be a JSON object");
  Heap heap(limits_);
  Scope* globals = heap.scope(nullptr);
  for (const char* t : {"true", "True"}) globals->vars.set(t, Value::boolean(true));
  for (const char* f : {"false", "False"}) globals->vars.set(f, Value::boolean(false));
  for (const char* n : {"none", "None"}) globals->vars.set(n, Value::none());
  for (const char* fn : {"namespace", "range", "raise_exception", "strftime_now"}) {
    Function f;
    f.name = fn;
    globals->vars.set(fn, heap.function(std::move(f)));
  }
  for (auto it = variables.begin(); it != variables.end(); ++it) {
    if (globals->vars.find(it.key()))
      fail(name(), ": the variable '", it.key(), "' would replace a built-in");
    try {
      globals->vars.set(it.key(), from_json(it.value(), heap));
    } catch (const Failure& f) {
      fail(name(), ": variable '", it.key(), "': ", f.what());
    }
  }
  Evaluator evaluator(*program_, heap, today);
  return evaluator.run(globals);
}

}  // namespace eagle2::jinja
