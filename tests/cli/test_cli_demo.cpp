// eagle2 demo, the README's main job: plain decoding and EAGLE-2 side by side on Python prompts.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::run_cli;

// The demo runs on any model with a tokenizer and a head; stories260K keeps the test fast (its
// completions of Python prompts are stories, which is fine for checking the plumbing).
TEST(CliDemo, CompletesThePromptsIdenticallyAndReportsTauAndSpeedup) {
  EAGLE2_SHARED_FILE(head, "data/models/stories260K-eagle-head/config.json");
  const std::string shared = test::shared_dir() + "/data/models/";
  const auto r = run_cli("demo -m " + shared + "stories260K-hf --draft " + shared +
                         "stories260K-eagle-head -n 24 -t 2");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* id : {"demo:search", "demo:stack", "demo:cli", "demo:numpy"})
    EXPECT_NE(r.out.find(std::string("--- ") + id + " ---"), std::string::npos) << id;
  EXPECT_NE(r.out.find("def binary_search(items, target):"), std::string::npos) << r.out;
  EXPECT_EQ(test::count_of(r.out, "| identical to plain decoding\n"), 4) << r.out;
  EXPECT_NE(r.out.find("all prompts: plain "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EAGLE-2's completions are identical to plain decoding's."),
            std::string::npos)
      << r.out;
}

TEST(CliDemo, OtherDraftersAndPromptFiles) {
  EAGLE2_SHARED_FILE(head, "data/models/stories260K-eagle-head/config.json");
  const std::string shared = test::shared_dir() + "/data/models/";
  const std::string prompts = test::temp_dir("cli_demo") + "/p.jsonl";
  test::write_file(prompts, "{\"text\": \"Once upon a time\"}\n");
  const auto r = run_cli("demo -m " + shared + "stories260K-hf --draft " + shared +
                         "stories260K-eagle-head -n 16 --tree chain:3 --prompts " + prompts);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("drafter chain:3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--- p:0 ---\nOnce upon a time"), std::string::npos) << r.out;
  EXPECT_EQ(test::count_of(r.out, "| identical to plain decoding\n"), 1) << r.out;
}

// The quickstart's sampled run (--temp, --seed): the tree drafter's text is plain sampling's for
// the seed, checked per prompt, and a sampled tree is timed beside it without a text claim.
TEST(CliDemo, SampledRunKeepsTheSeedsTextAndShowsTheSampledTreeBeside) {
  EAGLE2_SHARED_FILE(head, "data/models/stories260K-eagle-head/config.json");
  const std::string shared = test::shared_dir() + "/data/models/";
  const std::string base = "demo -m " + shared + "stories260K-hf --draft " + shared +
                           "stories260K-eagle-head -n 24 -t 2";
  const auto r = run_cli(base + " --temp 0.7 --seed 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sampling at temperature 0.7 (seed 3) of 24 tokens per prompt"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(test::count_of(r.out, "| identical to plain sampling (same seed)\n"), 4) << r.out;
  EXPECT_EQ(test::count_of(r.out, "| the same distribution, its own text\n"), 4) << r.out;
  EXPECT_NE(r.out.find("all prompts: plain "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", sampled:8:6:1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nEAGLE-2's completions are identical to plain sampling's with the same "
                       "seed.\n"),
            std::string::npos)
      << r.out;
  // Another seed, another text (the seed reaches the sampler); no sampled tree with none.
  const auto other = run_cli(base + " --temp 0.7 --seed 4 --sampled-tree none");
  ASSERT_EQ(other.code, 0) << other.out;
  EXPECT_EQ(test::count_of(other.out, "| the same distribution, its own text\n"), 0);
  const auto completion = [](const std::string& out) {  // the first prompt's text
    const size_t at = out.find("--- demo:search ---");
    return out.substr(at, out.find("--- plain", at) - at);
  };
  EXPECT_NE(completion(other.out), completion(r.out));
  // A sampled tree as the compared drafter, a non-sampled one beside, T out of range: one line.
  std::string why;
  auto e = test::run_cli_split(base + " --temp 0.7 --tree sampled:8:6:1");
  EXPECT_TRUE(test::is_one_clean_error(e, &why)) << why;
  e = test::run_cli_split(base + " --temp 0.7 --sampled-tree chain:3");
  EXPECT_TRUE(test::is_one_clean_error(e, &why)) << why;
  // An SpS chain samples its draft from q at T > 0: not comparable either (stories260K drafting
  // for itself is a draft model of the same vocabulary).
  e = test::run_cli_split(base + " --temp 0.7 --tree sps:" + shared + "stories260K-hf");
  EXPECT_TRUE(test::is_one_clean_error(e, &why)) << why;
  EXPECT_NE(e.err.find("its draft is sampled from q"), std::string::npos) << e.err;
  // Sampling flags without --temp, and a bad --sampled-tree whatever the temperature.
  for (const char* flags : {" --seed 3", " --sampled-tree none", " --sampled-tree chain:3"}) {
    e = test::run_cli_split(base + flags);
    EXPECT_TRUE(test::is_one_clean_error(e, &why)) << flags << ": " << why;
  }
  e = test::run_cli_split(base + " --temp 3");  // a flag check: CLI11's exit code
  EXPECT_NE(e.code, 0);
  EXPECT_EQ(e.err.rfind("error: --temp", 0), 0u) << e.err;
  EXPECT_EQ(e.out, "");
}

TEST(CliDemo, ErrorsAreOneClearLine) {
  EAGLE2_SHARED_FILE(head, "data/models/stories260K-eagle-head/config.json");
  const std::string shared = test::shared_dir() + "/data/models/";
  std::string why;
  auto r = test::run_cli_split("demo -m " + shared + "stories260K-hf --draft " + shared +
                               "stories260K-eagle-head --tree plain");
  EXPECT_TRUE(test::is_one_clean_error(r, &why)) << why;
  EXPECT_EQ(r.err, "error: --tree plain: the demo compares plain decoding with a drafter\n");
  EXPECT_EQ(r.out, "");  // nothing is printed before the setup succeeded
  r = test::run_cli_split("demo -m " + shared + "stories260K-hf --draft /nonexistent/head");
  EXPECT_TRUE(test::is_one_clean_error(r, &why)) << why;
  EXPECT_EQ(r.err.rfind("error: /nonexistent/head", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
  r = test::run_cli_split("demo -m " + shared + "stories260K-hf --draft " + shared +
                          "stories260K-eagle-head --tree 'static:[[0],[1'");
  EXPECT_TRUE(test::is_one_clean_error(r, &why)) << why;
  // Run from a folder without models/ and an executable outside a checkout's build folder the
  // bundled files cannot be found: the error says what to do.
  const std::string empty = test::temp_dir("cli_demo_empty");
  const std::string cli = std::filesystem::absolute(EAGLE2_CLI_PATH).string();
  const std::string copy = empty + "/eagle2";
  std::filesystem::copy_file(cli, copy, std::filesystem::copy_options::overwrite_existing);
  FILE* p = popen(("cd " + empty + " && ./eagle2 demo 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  EXPECT_NE(pclose(p), 0);
  EXPECT_NE(out.find("error: the bundled code-lm is not in ./models"), std::string::npos) << out;
}

}  // namespace
}  // namespace eagle2
