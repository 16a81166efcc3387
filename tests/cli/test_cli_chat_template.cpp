// eagle2 chat-template, run as a user would: the shipped templates render through the CLI exactly
// as the reference did (../shared/golden/chat_templates.json), a model folder's
// tokenizer_config.json supplies the template and its special tokens, and bad input is one line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using Json = nlohmann::ordered_json;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The first golden rendering of every shipped template that does not read today's date (the CLI
// renders with the real date; the golden file was made on 2026-11-30).
TEST(CliChatTemplate, ShippedTemplatesRenderAsTheReference) {
  EAGLE2_SHARED_FILE(golden_path, "golden/chat_templates.json");
  const Json golden = Json::parse(read_text(golden_path));
  const std::string dir = test::temp_dir("cli-chat-template");
  std::map<std::string, bool> seen;
  int checked = 0, raised = 0;
  for (const Json& r : golden.at("renderings")) {
    const std::string name = r.at("name").get<std::string>();
    const std::string tmpl = test::shared_dir() + "/data/chat_templates/" + name + ".jinja";
    if (seen[name] || read_text(tmpl).find("strftime_now") != std::string::npos) continue;
    seen[name] = true;
    const std::string messages = dir + "/" + name + ".json";
    write_text(messages, r.at("messages").dump());
    std::string args = "chat-template --template " + tmpl + " --messages " + messages;
    if (r.at("add_generation_prompt").get<bool>()) args += " --add-generation-prompt";
    if (r.contains("bos_token") && r.at("bos_token").is_string())
      args += " --bos-token " + quoted(r.at("bos_token").get<std::string>());
    if (r.contains("eos_token") && r.at("eos_token").is_string())
      args += " --eos-token " + quoted(r.at("eos_token").get<std::string>());
    const test::CliRun run = test::run_cli_split(args);
    if (r.contains("error")) {
      std::string why;
      EXPECT_TRUE(test::is_one_clean_error(run, &why)) << name << ": " << why;
      ++raised;
    } else {
      EXPECT_EQ(run.code, 0) << name << ": " << run.err;
      EXPECT_EQ(run.out, r.at("text").get<std::string>()) << name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

// A model folder: the template and the eos token come from its tokenizer_config.json (Qwen3's,
// which has no bos token: --bos-token fills it in only because the model has none).
TEST(CliChatTemplate, ModelFolderSuppliesTemplateAndTokens) {
  EAGLE2_SHARED_FILE(config, "data/tokenizers/qwen3/tokenizer_config.json");
  const std::string dir = test::temp_dir("cli-chat-model");
  write_text(dir + "/tokenizer_config.json", read_text(config));
  write_text(dir + "/template.jinja",
             Json::parse(read_text(config)).at("chat_template").get<std::string>());
  write_text(
      dir + "/m.json",
      R"({"messages": [{"role": "user", "content": "Hi \"there\" ünï"}], "enable_thinking": false})");
  const test::CliRun from_model = test::run_cli_split("chat-template -m " + dir + " --messages " +
                                                      dir + "/m.json --add-generation-prompt");
  ASSERT_EQ(from_model.code, 0) << from_model.err;
  EXPECT_EQ(from_model.out,
            "<|im_start|>user\nHi \"there\" "
            "ünï<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  const test::CliRun from_file =
      test::run_cli_split("chat-template --template " + dir + "/template.jinja --messages " + dir +
                          "/m.json --add-generation-prompt --eos-token '<|im_end|>'");
  EXPECT_EQ(from_file.out, from_model.out);
}

// A GGUF file's tokenizer.chat_template (llama.cpp's Phi-3 vocabulary) with the GGUF's own bos
// token; the expected text is what @huggingface/jinja 0.5.11 renders from that template.
TEST(CliChatTemplate, GgufSuppliesTemplateAndTokens) {
  EAGLE2_SHARED_FILE(gguf, "data/gguf_vocab/ggml-vocab-phi-3.gguf");
  const std::string dir = test::temp_dir("cli-chat-gguf");
  write_text(dir + "/m.json",
             R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])");
  const test::CliRun run = test::run_cli_split("chat-template -m " + gguf + " --messages " + dir +
                                               "/m.json --add-generation-prompt");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "<s><|user|>\nHi<|end|>\n<|assistant|>\nHello<|end|>\n");
  const test::CliRun none =
      test::run_cli_split("chat-template -m " + test::shared_dir() +
                          "/data/gguf_vocab/ggml-vocab-gpt-2.gguf --messages " + dir + "/m.json");
  EXPECT_EQ(none.err,
            "error: " + test::shared_dir() +
                "/data/gguf_vocab/ggml-vocab-gpt-2.gguf: no tokenizer.chat_template: this "
                "model has no chat template (pass --template FILE)\n");
}

TEST(CliChatTemplate, BadInputIsOneLine) {
  const std::string dir = test::temp_dir("cli-chat-bad");
  write_text(dir + "/t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  write_text(dir + "/ok.json", R"([{"role": "user", "content": "x"}])");
  write_text(dir + "/bad.json", "[{\"role\": ");
  write_text(dir + "/obj.json", R"({"role": "user"})");
  write_text(dir + "/tokenizer_config.json", R"({"eos_token": "</s>"})");
  std::string why;
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"--messages " + dir + "/ok.json",
            "chat-template: give exactly one of -m MODEL_DIR and --template FILE"},
           {"-m " + dir + " --template " + dir + "/t.jinja --messages " + dir + "/ok.json",
            "chat-template: give exactly one of -m MODEL_DIR and --template FILE"},
           {"-m " + dir + " --messages " + dir + "/ok.json",
            dir + "/tokenizer_config.json: no \"chat_template\": this model has no chat template "
                  "(pass --template FILE)"},
           {"--template " + dir + "/t.jinja --messages " + dir + "/obj.json",
            dir + "/obj.json: a JSON object must have \"messages\" (the conversation)"},
       }) {
    const test::CliRun run = test::run_cli_split("chat-template " + args);
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
    EXPECT_EQ(run.err, "error: " + message + "\n") << args;
  }
  // A FIFO is refused, not waited on.
  const std::string fifo = dir + "/fifo.json";
  ASSERT_EQ(std::system(("rm -f " + fifo + " && mkfifo " + fifo).c_str()), 0);
  const test::CliRun from_fifo =
      test::run_cli_split("chat-template --template " + dir + "/t.jinja --messages " + fifo);
  EXPECT_TRUE(test::is_one_clean_error(from_fifo, &why)) << why;
  EXPECT_FALSE(from_fifo.timed_out);
  const test::CliRun bad_json = test::run_cli_split("chat-template --template " + dir +
                                                    "/t.jinja --messages " + dir + "/bad.json");
  EXPECT_TRUE(test::is_one_clean_error(bad_json, &why)) << why;
  EXPECT_EQ(bad_json.err.rfind("error: " + dir + "/bad.json: not valid JSON", 0), 0u)
      << bad_json.err;
}

}  // namespace
}  // namespace eagle2
