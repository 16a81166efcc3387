// eagle2/chat.h over chat/chat_template.h, and the reading of tokenizer_config.json.
#include "eagle2/chat.h"

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "io/gguf.h"

namespace eagle2::api {

struct ChatTemplate::Impl {
  eagle2::ChatTemplate chat;
  std::optional<std::string> bos, eos;
};

namespace {

using Json = nlohmann::ordered_json;

Json parse_json(const std::string& text, const std::string& where) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail(where, ": not valid JSON (", e.what(), ")");
  }
}

// A special token in tokenizer_config.json: "<s>", {"content": "<s>", ...}, or null/absent.
std::optional<std::string> special_token(const Json& config, const char* key,
                                         const std::string& where) {
  if (!config.contains(key) || config.at(key).is_null()) return std::nullopt;
  const Json& v = config.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v.at("content").is_string())
    return v.at("content").get<std::string>();
  fail(where, ": \"", key, "\" must be a string or an object with a string \"content\"");
}

// "chat_template": the text, or a list of named templates of which "default" is the one used
// (as transformers picks it when no name is asked for).
std::string template_text(const Json& config, const std::string& where) {
  if (!config.contains("chat_template") || config.at("chat_template").is_null())
    fail(where, ": no \"chat_template\": this model has no chat template (pass --template FILE)");
  const Json& t = config.at("chat_template");
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const Json& named : t)
      if (named.is_object() && named.value("name", Json()) == "default" &&
          named.contains("template") && named.at("template").is_string())
        return named.at("template").get<std::string>();
    fail(where, ": \"chat_template\" lists no template named \"default\"");
  }
  fail(where, ": \"chat_template\" must be a string or a list of {\"name\", \"template\"}");
}

}  // namespace

namespace {

// The text of the token a GGUF's tokenizer.ggml.<which>_token_id names, if it names one.
std::optional<std::string> gguf_token(const GgufFile& gguf, const char* which) {
  const int64_t id = gguf.integer_or(std::string("tokenizer.ggml.") + which + "_token_id", -1);
  if (id < 0) return std::nullopt;
  const GgufValue* tokens = gguf.array("tokenizer.ggml.tokens", GgufType::kString, true);
  if (static_cast<uint64_t>(id) >= tokens->strings.size())
    gguf.fail_at(std::string("tokenizer.ggml.") + which + "_token_id " + std::to_string(id) +
                 " is past the vocabulary");
  return std::string(tokens->strings[static_cast<size_t>(id)]);
}

}  // namespace

ChatTemplate ChatTemplate::from_model_dir(const std::string& dir) {
  if (dir.size() > 5 && dir.compare(dir.size() - 5, 5, ".gguf") == 0) {
    const GgufFile gguf(dir);
    if (!gguf.find("tokenizer.chat_template"))
      fail(dir,
           ": no tokenizer.chat_template: this model has no chat template (pass --template FILE)");
    return ChatTemplate(std::make_unique<Impl>(
        Impl{eagle2::ChatTemplate(gguf.string("tokenizer.chat_template"), dir),
             gguf_token(gguf, "bos"), gguf_token(gguf, "eos")}));
  }
  const std::string path = dir + "/tokenizer_config.json";
  const Json config =
      parse_json(read_regular_file(path, read_limit::kJson, "a tokenizer config"), path);
  if (!config.is_object()) fail(path, ": must be a JSON object");
  auto impl = std::make_unique<Impl>(Impl{eagle2::ChatTemplate(template_text(config, path), path),
                                          special_token(config, "bos_token", path),
                                          special_token(config, "eos_token", path)});
  return ChatTemplate(std::move(impl));
}

ChatTemplate ChatTemplate::from_file(const std::string& path) {
  const std::string text = read_regular_file(path, read_limit::kJson, "a chat template");
  return ChatTemplate(std::make_unique<Impl>(Impl{eagle2::ChatTemplate(text, path), {}, {}}));
}

ChatTemplate::ChatTemplate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

const std::optional<std::string>& ChatTemplate::bos_token() const {
  return impl_->bos;
}
const std::optional<std::string>& ChatTemplate::eos_token() const {
  return impl_->eos;
}

std::string ChatTemplate::render(const std::string& messages_json, const std::string& where,
                                 bool add_generation_prompt,
                                 const std::optional<std::string>& bos_fallback,
                                 const std::optional<std::string>& eos_fallback) const {
  Json doc = parse_json(messages_json, where);
  ChatTemplateInputs in;
  if (doc.is_object()) {
    if (!doc.contains("messages"))
      fail(where, ": a JSON object must have \"messages\" (the conversation)");
    in.messages = doc.at("messages");
    doc.erase("messages");
    in.extra = std::move(doc);
  } else {
    in.messages = std::move(doc);
  }
  if (!in.messages.is_array())
    fail(where, ": the messages must be a JSON array of {\"role\", \"content\", ...} objects");
  for (size_t i = 0; i < in.messages.size(); ++i)
    if (!in.messages[i].is_object()) fail(where, ": message ", i, " is not a JSON object");
  in.add_generation_prompt = add_generation_prompt;
  in.bos_token = impl_->bos ? impl_->bos : bos_fallback;
  in.eos_token = impl_->eos ? impl_->eos : eos_fallback;
  in.today = local_date_now();
  return impl_->chat.render(in);
}

std::string read_messages_file(const std::string& path) {
  return read_regular_file(path, read_limit::kJson, "a messages file");
}

}  // namespace eagle2::api
