// Chat templates: a model's Jinja template turning a conversation into the prompt text the model
// was trained on, rendered exactly as Hugging Face does (docs/CHAT_TEMPLATES.md).
//
// Contract. Ownership: a ChatTemplate owns its parsed template and special tokens and refers to
// no file after construction. Errors: eagle2::Error naming the file or `where` (no template,
// unreadable file, malformed JSON, a template that raises). Threads: render() is const and keeps
// no state between calls, so one template may render from several threads at once (eagle2 serve
// does, one request per HTTP thread); construction and assignment are not concurrent-safe.
// Sizes: messages files at most 64 MiB.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace eagle2::api {

class ChatTemplate {
 public:
  // A model folder's tokenizer_config.json: "chat_template" (a string, or a list of
  // {"name", "template"} of which "default" is used) and its bos/eos tokens (a string or
  // {"content": ...}); or a .gguf file's tokenizer.chat_template and the texts of its
  // tokenizer.ggml.bos/eos_token_id. Error when the model has no template.
  static ChatTemplate from_model_dir(const std::string& dir);
  // A template file (Jinja text); it brings no special tokens.
  static ChatTemplate from_file(const std::string& path);
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // The model's own special tokens (none from a template file).
  const std::optional<std::string>& bos_token() const;
  const std::optional<std::string>& eos_token() const;

  // messages_json: the text of a JSON array of messages ({"role", "content", ...}, key order
  // kept as the template's tojson shows it), or of an object with "messages" and further
  // variables (tools, enable_thinking, ...). `where` names it in errors. bos/eos: used where the
  // model provides none. Rendered with today's date for strftime_now. Error when the JSON is not
  // a conversation or the template raises.
  std::string render(const std::string& messages_json, const std::string& where,
                     bool add_generation_prompt, const std::optional<std::string>& bos_fallback,
                     const std::optional<std::string>& eos_fallback) const;

  struct Impl;
  explicit ChatTemplate(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// The text of a messages file for render(): a regular file (a FIFO or a directory is an Error, not
// a hang) of at most 64 MiB.
std::string read_messages_file(const std::string& path);

}  // namespace eagle2::api
