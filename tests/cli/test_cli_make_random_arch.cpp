// make-random --arch llama3|qwen2|qwen3 and eagle2 logprobs, run as a user would: the GGUF files
// (with the real LLaMA-3 / Qwen3 tokenizers from ../shared, skipped where absent) run in generate,
// their logits are peaked, logprobs --greedy follows generate's greedy path and prints what it
// says it prints; bad flags are one error line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;
using test::CliRun;
using test::run_cli_split;

std::vector<json> json_lines(const std::string& out) {
  std::vector<json> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  return rows;
}

std::string without_newlines(const std::string& s) {
  const size_t end = s.find_last_not_of('\n');
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

std::string join(const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) {
    if (!s.empty()) s += ',';
    s += std::to_string(id);
  }
  return s;
}

TEST(CliMakeRandomArch, WritesGgufFilesThatRunWithPeakedLogits) {
  EAGLE2_SHARED_FILE(llama3, "data/tokenizers/llama3/tokenizer.json");
  EAGLE2_SHARED_FILE(qwen3, "data/tokenizers/qwen3/tokenizer.json");
  const std::string dir = test::temp_dir("cli-arch");
  for (const auto& [arch, tokenizer, vocab] : {std::tuple{"llama3", llama3, "128256"},
                                               {"qwen2", qwen3, "151936"},
                                               {"qwen3", qwen3, "151936"}}) {
    const std::string path = dir + "/" + arch + ".gguf";
    const CliRun made = run_cli_split(std::string("make-random --arch ") + arch + " --tokenizer " +
                                      tokenizer + " -o " + path + " --dtype q8_0 --seed 2");
    ASSERT_EQ(made.code, 0) << made.err;
    EXPECT_EQ(made.out,
              "wrote " + path + ": " + arch + ", 2 layers, hidden 64, vocab " + vocab + ", Q8_0\n");
    const CliRun g =
        run_cli_split("generate -m " + path + " -p 'Hello, world' -n 6 -t 1 --ignore-eos");
    ASSERT_EQ(g.code, 0) << g.err;
    EXPECT_TRUE(g.out.starts_with("Hello, world")) << g.out;

    // logprobs --greedy: the prompt's tokens, then generate's six; each greedy row's next token is
    // its own top-1, and the log-probabilities are a peaked distribution.
    const CliRun lp =
        run_cli_split("logprobs -m " + path + " -p 'Hello, world' --greedy 6 --top 3 -t 1");
    ASSERT_EQ(lp.code, 0) << lp.err;
    const std::vector<json> rows = json_lines(lp.out);
    const CliRun ids = run_cli_split("tokenize -m " + path + " -p 'Hello, world'");
    const size_t prompt = static_cast<size_t>(std::count(ids.out.begin(), ids.out.end(), ',') + 1);
    ASSERT_EQ(rows.size(), prompt + 6) << lp.out;
    std::vector<int> path_ids;
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i]["position"], i);
      path_ids.push_back(rows[i]["token"].get<int>());
      ASSERT_EQ(rows[i]["top"].size(), 3u);
      const double top1 = rows[i]["top"][0][1], top2 = rows[i]["top"][1][1];
      EXPECT_GE(top1, top2);
      if (i + 1 < rows.size()) {
        EXPECT_EQ(rows[i]["next"], rows[i + 1]["token"]);
        if (i + 1 >= prompt) {  // a greedy pick: the row's most likely token
          EXPECT_EQ(rows[i]["next"], rows[i]["top"][0][0]) << arch << " row " << i;
          EXPECT_EQ(rows[i]["next_logprob"].get<double>(), top1);
          // Peaked: the top token holds a real share of 150k tokens' mass.
          EXPECT_GT(top1, -4.0) << arch << " row " << i;
        }
      } else {
        EXPECT_FALSE(rows[i].contains("next"));
      }
    }
    const CliRun text = run_cli_split("tokenize -m " + path + " --decode " + join(path_ids));
    EXPECT_EQ(without_newlines(text.out), without_newlines(g.out))
        << arch << ": logprobs' greedy path is not generate's";
  }
}

TEST(CliMakeRandomArch, BadFlagsAreOneErrorLine) {
  const std::string dir = test::temp_dir("cli-arch-bad");
  const std::string out = dir + "/m.gguf", json_path = dir + "/tokenizer.json";
  for (const auto& [args, code, message] : std::vector<std::tuple<std::string, int, std::string>>{
           {"make-random --arch gpt2 -o " + out + " --tokenizer " + json_path, 1,
            "--arch: 'gpt2' is not one of llama3, qwen2, qwen3, mixtral, qwen3moe"},
           {"make-random --arch llama3 -o " + out, 1,
            "--arch llama3: give --tokenizer, the tokenizer.json of the model family (LLaMA-3's "
            "for llama3, Qwen's for qwen2, qwen3 and qwen3moe)"},
           {"make-random --arch qwen3 --preset tiny -o " + out + " --tokenizer " + json_path, 1,
            "--preset: cannot be combined with --arch (--arch sets the shape)"},
           {"make-random --arch qwen3 --tie -o " + out + " --tokenizer " + json_path, 1,
            "--tie: --arch models are tied already"},
           {"make-random --arch qwen2 -o " + out + " --tokenizer " + json_path + " --dtype q5_0", 1,
            "--dtype: 'q5_0' is not one of f32, f16, bf16, q8_0, q4_0"},
           {"make-random --arch qwen2 -o " + dir + "/m --tokenizer " + json_path, 1,
            dir + "/m: the output is a GGUF file: give a name ending in .gguf"},
           {"make-random --arch qwen2 -o " + out + " --tokenizer " + json_path, 1,
            json_path + ": cannot open: No such file or directory"},
       }) {
    const CliRun r = run_cli_split(args);
    EXPECT_EQ(r.code, code) << args;
    EXPECT_EQ(r.err, "error: " + message + "\n") << args;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CliLogprobs, BadInputIsOneErrorLine) {
  const std::string dir = test::temp_dir("cli-logprobs");
  const CliRun made = run_cli_split("make-random -o " + dir + "/tiny");
  ASSERT_EQ(made.code, 0) << made.err;
  const std::string m = " -m " + dir + "/tiny";
  for (const auto& [args, code, message] : std::vector<std::tuple<std::string, int, std::string>>{
           {"logprobs" + m, 1, "logprobs: give exactly one of -p TEXT and --tokens IDS"},
           {"logprobs" + m + " --tokens 1,x", 1, "--tokens: 'x' is not a token id"},
           {"logprobs" + m + " --tokens 1,512", 1,
            "logprobs: token 512 at position 1 is not in the vocabulary [0, 512)"},
           {"logprobs" + m + " --tokens 1 --top 0", 2, "--top: '0' is out of range [1, 1000]"},
           {"logprobs" + m + " --tokens 1 --greedy 5000", 1,
            "--greedy: the path would have 5001 tokens but the model's context is 4096"},
       }) {
    const CliRun r = run_cli_split(args);
    EXPECT_EQ(r.code, code) << args;
    EXPECT_EQ(r.err, "error: " + message + "\n") << args;
  }
  // Four rows for four tokens; the last names no next token.
  const CliRun r = run_cli_split("logprobs" + m + " --tokens 1,2,3,4 --top 2 -t 1");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<json> rows = json_lines(r.out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2]["next"], 4);
  EXPECT_FALSE(rows[3].contains("next"));
}

}  // namespace
}  // namespace eagle2
