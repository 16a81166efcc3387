// Chat templates: a model's Jinja template turning a conversation (JSON messages) into the prompt
// text the model was trained on, rendered exactly as Hugging Face does (the reference renderer is
// @huggingface/jinja 0.5.11; see docs/CHAT_TEMPLATES.md). This is what the CLI and a server call.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja_template.h"

namespace eagle2 {

struct ChatTemplateInputs {
  // [{"role": ..., "content": ...}, ...] in the template's own message format (tool calls,
  // reasoning_content and so on pass through as given). Key order is kept, as tojson shows it.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  bool add_generation_prompt = false;
  // The model's special tokens; a template sees them as undefined when absent.
  std::optional<std::string> bos_token, eos_token;
  // Further variables (tools, documents, enable_thinking, ...): a JSON object.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  // What strftime_now formats: a server passes the current date, tests a fixed one. Unset, a
  // template that calls strftime_now fails.
  jinja::Date today;
};

class ChatTemplate {
 public:
  // Parses the template (throws eagle2::Error "NAME:LINE: syntax error: ..."); `name` is what
  // errors call it, e.g. the file it came from.
  explicit ChatTemplate(std::string_view source, std::string name = "chat template",
                        const jinja::Limits& limits = {});

  // The prompt text, exactly as rendered (no newline added). Throws eagle2::Error when the
  // template raises ("NAME:LINE: raise_exception: ..."), fails, or reaches a limit.
  std::string render(const ChatTemplateInputs& inputs) const;

 private:
  jinja::Template template_;
};

// The local date and time now, for ChatTemplateInputs::today.
jinja::Date local_date_now();

}  // namespace eagle2
