// eagle2 perplexity, run as a user would on the bundled model: the figure is llama-perplexity's
// method (whole-file tokens with BOS, chunks of -c tokens with BOS first, the second half of each
// scored), recomputed here from the public API chunk by chunk; the forward size changes nothing;
// and bad input is one clean error. The figure against llama.cpp itself: test_llama_parity_slow.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "eagle2/model.h"
#include "eagle2/perplexity.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// Python-shaped text (the bundled model is a Python model), a few hundred tokens.
std::string code_text() {
  std::string s;
  for (int i = 0; i < 24; ++i) {
    s += "def scale_" + std::to_string(i) + "(values, factor=" + std::to_string(i + 2) + "):\n";
    s += "    \"\"\"Multiply every value by the factor.\"\"\"\n";
    s += "    return [v * factor for v in values if v is not None]\n\n";
  }
  return s;
}

std::string text_file() {
  const std::string path = test::temp_dir("cli-perplexity") + "/code.py";
  test::write_file(path, code_text());
  return path;
}

std::string fixed4(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", x);
  return buf;
}

TEST(CliPerplexity, FigureIsLlamaPerplexitysMethod) {
  const std::string file = text_file();
  const test::CliRun run =
      test::run_cli_split("perplexity -m " + test::kBundledModel + " -f " + file + " -c 64 -t 2");
  ASSERT_EQ(run.code, 0) << run.err;

  api::Model model = api::Model::load(test::kBundledModel);
  const api::Tokenizer tok = api::Tokenizer::open(test::kBundledModel);
  ASSERT_TRUE(tok.adds_bos());
  const std::vector<int32_t> tokens = tok.encode(code_text(), true);
  const int64_t chunks = static_cast<int64_t>(tokens.size()) / 64;
  ASSERT_GE(chunks, 3) << "the text is too short for the test";
  api::Threads threads(2);
  std::vector<double> nlls;
  std::string want = file + ": " + std::to_string(tokens.size()) +
                     " tokens (BOS first, and first in every chunk); " + std::to_string(chunks) +
                     " chunks of 64, each scored on its last 31 " + "predictions\n";
  for (int64_t i = 0; i < chunks; ++i) {
    std::vector<int32_t> chunk(tokens.begin() + i * 64, tokens.begin() + (i + 1) * 64);
    chunk[0] = tok.bos_id();
    const std::vector<double> part = api::token_nlls(model, chunk, 32, 64, threads);
    nlls.insert(nlls.end(), part.begin(), part.end());
    want += "chunk " + std::to_string(i + 1) + "/" + std::to_string(chunks) + ": running PPL " +
            fixed4(api::estimate_perplexity(nlls).ppl) + "\n";
  }
  const api::PerplexityEstimate e = api::estimate_perplexity(nlls);
  char last[200];
  std::snprintf(last, sizeof last, "PPL = %.4f +/- %.5f over %lld tokens (%lld chunks of 64)\n",
                e.ppl, e.error, static_cast<long long>(chunks * 31),
                static_cast<long long>(chunks));
  EXPECT_EQ(run.out, want + last);
  // A model of Python code finds Python code far likelier than uniform (4096 tokens).
  EXPECT_LT(e.ppl, 200.0);
  EXPECT_NE(run.err.find("[stats] "), std::string::npos) << run.err;

  // The forward size changes no figure; --chunks keeps the first chunks.
  const std::string base = "perplexity -m " + test::kBundledModel + " -f " + file + " -c 64 ";
  EXPECT_EQ(test::run_cli_split(base + "-b 5 -t 1").out, run.out);
  const test::CliRun two = test::run_cli_split(base + "--chunks 2");
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_NE(two.out.find("chunk 2/2: running PPL "), std::string::npos) << two.out;
  EXPECT_EQ(two.out.find("chunk 3/"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find(" over 62 tokens (2 chunks of 64)\n"), std::string::npos) << two.out;
}

TEST(CliPerplexity, BadInputIsOneCleanError) {
  const std::string file = text_file();
  const std::string dir = test::temp_dir("cli-perplexity-bad");
  test::write_file(dir + "/short.py", "x = 1\n");
  test::write_file(dir + "/latin1.txt", std::string("caf\xe9 ") + code_text());
  const std::string m = "perplexity -m " + test::kBundledModel;
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {m + " -f " + dir + "/short.py -c 64", "needs at least 128 (two chunks)"},
           {m + " -f " + file + " -c 2048",
            "-c 2048 exceeds the model's context of 1024 positions"},
           {m + " -f " + dir + "/nothing.txt", ""},
           {m + " -f " + dir + "/latin1.txt -c 64", ""},
       }) {
    const test::CliRun run = test::run_cli_split(args);
    std::string why;
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << args << ": " << why;
    EXPECT_NE(run.err.find(message), std::string::npos) << args << ": " << run.err;
    EXPECT_EQ(run.out, "") << args;
  }
  // Flag syntax: exit 2.
  for (const std::string& args : {m + " -f " + file + " -c 4", m + " -f " + file + " -b 0",
                                  m + " -f " + file + " --chunks 0", m + " -c 64"}) {
    const test::CliRun run = test::run_cli_split(args);
    EXPECT_EQ(run.code, 2) << args << ": " << run.err;
  }
}

}  // namespace
}  // namespace eagle2
