#include "chat/chat_template.h"

#include <ctime>

#include "core/error.h"

namespace eagle2 {

ChatTemplate::ChatTemplate(std::string_view source, std::string name, const jinja::Limits& limits)
    : template_(source, std::move(name), limits) {}

std::string ChatTemplate::render(const ChatTemplateInputs& inputs) const {
  const std::string& name = template_.name();
  if (!inputs.messages.is_array()) fail(name, ": the messages must be a JSON array");
  if (!inputs.extra.is_object()) fail(name, ": the extra variables must be a JSON object");
  nlohmann::ordered_json variables = inputs.extra;
  auto put = [&](const char* key, nlohmann::ordered_json value) {
    if (variables.contains(key))
      fail(name, ": the extra variables may not set '", key, "' (it has its own input)");
    variables[key] = std::move(value);
  };
  put("messages", inputs.messages);
  put("add_generation_prompt", inputs.add_generation_prompt);
  if (inputs.bos_token) put("bos_token", *inputs.bos_token);
  if (inputs.eos_token) put("eos_token", *inputs.eos_token);
  return template_.render(variables, inputs.today);
}

jinja::Date local_date_now() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  jinja::Date d;
  d.year = local.tm_year + 1900;
  d.month = local.tm_mon + 1;
  d.day = local.tm_mday;
  d.hour = local.tm_hour;
  d.minute = local.tm_min;
  return d;
}

}  // namespace eagle2
