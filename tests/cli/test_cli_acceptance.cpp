// eagle2 acceptance (eagle2/acceptance.h) on the bundled model: a draft model that is the target
// itself has TV 0 at every depth; at temperature 0 the figures of a real head obey the identities
// of one-hot distributions; bad flags are one clean error.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "eagle2/acceptance.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

std::string prompt_file() {
  const std::string path = test::temp_dir("cli-acceptance") + "/prompts.jsonl";
  test::write_file(path,
                   "{\"prompt\": \"def add(a, b):\\n\"}\n{\"prompt\": \"class Stack:\\n\"}\n");
  return path;
}

// The rows of the depth table: the words of every line that starts with a depth number.
std::vector<std::vector<std::string>> depth_rows(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0][0]))) rows.push_back(w);
  }
  return rows;
}

TEST(CliAcceptance, TheTargetAsItsOwnDraftHasNoMismatch) {
  const test::CliRun run = test::run_cli_split(
      "acceptance -m " + test::kBundledModel + " --draft-model " + test::kBundledModel +
      " --prompts " + prompt_file() + " -n 8 --temps 0.7 --depth 2 -t 2");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("temperature 0.70: 2 prompts, 16 new tokens, 14 roots"), std::string::npos)
      << run.out;
  const auto rows = depth_rows(run.out);
  ASSERT_EQ(rows.size(), 2u) << run.out;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 12u);
    EXPECT_EQ(r[2], "0.000");  // TV
    EXPECT_EQ(r[3], "1.000");  // 1 - TV
    EXPECT_EQ(r[4], "1.000");  // sampled: always accepted
    EXPECT_EQ(r[6], r[7]);     // E[top1] = max p
  }
}

// At temperature 0, p and q are one-hot at their argmax and the target's token is p's argmax, so
// 1 - TV, the sampled rule and the rank-1 figures are one number: whether the head's argmax is
// the target's.
TEST(CliAcceptance, AtTemperatureZeroARealHeadsFiguresAreOneNumber) {
  api::Model model = api::Model::load(test::kBundledModel);
  api::Head head = api::Head::load(test::kBundledHead, model);
  const api::Tokenizer tok = api::Tokenizer::open(test::kBundledModel);
  api::Threads threads(2);
  api::AcceptanceOptions o;
  o.temperature = 0;
  o.depth = 3;
  o.new_tokens = 12;
  const api::AcceptanceReport r = api::measure_acceptance(
      model, head, {tok.encode("def add(a, b):\n", true), tok.encode("import os\n", true)}, o,
      threads);
  ASSERT_EQ(r.depths.size(), 3u);
  EXPECT_EQ(r.prompts, 2);
  for (const api::DepthAcceptance& d : r.depths) {
    ASSERT_GT(d.pairs, 0);
    EXPECT_DOUBLE_EQ(1 - d.tv, d.top1);
    EXPECT_DOUBLE_EQ(d.sampled, d.top1);
    EXPECT_DOUBLE_EQ(d.top1_expected, d.top1);
    EXPECT_DOUBLE_EQ(d.top1_ceiling, 1.0);
    EXPECT_DOUBLE_EQ(d.entropy, 0.0);
  }
  EXPECT_GT(r.tau_top1_chain, 1.0);  // the bundled head agrees with its target at T = 0
}

TEST(CliAcceptance, BadFlagsAreOneCleanError) {
  const std::string base = "acceptance -m " + test::kBundledModel + " --prompts " + prompt_file();
  for (const std::string& args :
       {base,  // neither --draft nor --draft-model
        base + " --draft " + test::kBundledHead + " --draft-model " + test::kBundledModel,
        base + " --draft-model " + test::kBundledModel + " --draft-vocab 16",
        base + " --draft-model " + test::kBundledModel + " --temps 0.7,x",
        base + " --draft-model " + test::kBundledModel + " --temps 1 --top-p 0"}) {
    const test::CliRun run = test::run_cli_split(args);
    std::string why;
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
  }
  // Flag syntax: exit 2.
  EXPECT_EQ(test::run_cli_split(base + " --depth 0").code, 2);
}

}  // namespace
}  // namespace eagle2
