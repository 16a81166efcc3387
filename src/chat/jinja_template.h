// A Jinja template as Hugging Face renders chat templates: parsed once (lexer -> syntax tree),
// then rendered by an interpreter whose semantics follow the reference, @huggingface/jinja 0.5.11
// (see docs/CHAT_TEMPLATES.md for what is supported and where it differs from Python's Jinja2).
// Every failure is one eagle2::Error naming the template and line: "NAME:LINE: syntax error: ...",
// "NAME:LINE: raise_exception: MESSAGE" when the template rejects its input, "NAME:LINE: ..." for
// anything else the template does wrong or a limit it reaches.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "chat/jinja_globals.h"
#include "chat/jinja_limits.h"
#include "chat/jinja_methods.h"

namespace eagle2::jinja {

struct Program;

class Template {
 public:
  // Throws on a syntax error, a template over limits.max_template_bytes or text that is not UTF-8.
  Template(std::string_view source, std::string name, const Limits& limits = {});

  // Renders with the entries of `variables` (a JSON object) as global variables, next to the
  // built-ins true/false/none (and True/False/None), namespace, range, raise_exception and
  // strftime_now, which formats `today`. An entry may not replace a built-in. Const and
  // self-contained: concurrent renders of one Template are safe.
  std::string render(const nlohmann::ordered_json& variables, const Date& today) const;

  const std::string& name() const;

 private:
  std::shared_ptr<const Program> program_;
  Limits limits_;
};

}  // namespace eagle2::jinja
