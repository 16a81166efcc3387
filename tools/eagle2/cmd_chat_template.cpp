// eagle2 chat-template: a conversation rendered with a model's chat template, printed exactly as
// the model will read it (no newline added), for checking what a chat request turns into.
#include <cstdio>
#include <optional>
#include <string>

#include "commands.h"
#include "eagle2/chat.h"
#include "eagle2/error.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct ChatTemplateFlags {
  std::string model_dir, template_file, messages_file, bos, eos;
  bool add_generation_prompt = false;
  bool bos_given = false, eos_given = false;
};

int run_chat_template(const ChatTemplateFlags& f) {
  if (f.model_dir.empty() == f.template_file.empty())
    fail("chat-template: give exactly one of -m MODEL_DIR and --template FILE");
  const ChatTemplate chat = f.model_dir.empty() ? ChatTemplate::from_file(f.template_file)
                                                : ChatTemplate::from_model_dir(f.model_dir);
  const std::optional<std::string> bos = f.bos_given ? std::optional(f.bos) : std::nullopt;
  const std::optional<std::string> eos = f.eos_given ? std::optional(f.eos) : std::nullopt;
  const std::string prompt = chat.render(read_messages_file(f.messages_file), f.messages_file,
                                         f.add_generation_prompt, bos, eos);
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

Command add_chat_template(CLI::App& app) {
  auto f = std::make_shared<ChatTemplateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "chat-template", "Render a conversation with a model's chat template (prints the prompt)");
  cmd->add_option("-m,--model", f->model_dir,
                  "Model folder whose tokenizer_config.json has the chat template, or a FILE.gguf");
  cmd->add_option("--template", f->template_file, "A chat template file (Jinja) instead of -m");
  cmd->add_option("--messages", f->messages_file,
                  "JSON file: an array of {\"role\", \"content\", ...} messages, or an object with "
                  "\"messages\" and further template variables (tools, ...)")
      ->required();
  cmd->add_flag("--add-generation-prompt", f->add_generation_prompt,
                "End with the assistant's turn opening, as a chat request does");
  cmd->add_option_function<std::string>(
      "--bos-token", [f](const std::string& s) { f->bos = s, f->bos_given = true; },
      "bos_token for templates whose model provides none");
  cmd->add_option_function<std::string>(
      "--eos-token", [f](const std::string& s) { f->eos = s, f->eos_given = true; },
      "eos_token for templates whose model provides none");
  return {cmd, [f] { return run_chat_template(*f); }};
}

}  // namespace eagle2::cli
