// eagle2/perplexity.h: token_nlls scores each token with the model's own next-token distribution
// (checked against decoding one token at a time and an independent log-softmax), whatever the
// forward size; estimate_perplexity is exp(mean NLL) with llama-perplexity's standard error.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "eagle2/model.h"
#include "eagle2/perplexity.h"
#include "eagle2/runtime.h"
#include "model/batch.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

std::vector<int32_t> some_tokens(int n, int vocab) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((i * 37 + 11) % vocab));
  return t;
}

// -log p(tokens[i + 1]) for every i, decoding one token per forward and taking the log-softmax
// in long double: another path through the model and another formula than token_nlls.
std::vector<double> reference_nlls(LlamaModel& model, const std::vector<int32_t>& tokens) {
  ThreadPool pool(1);
  KvCache kv = model.make_cache(static_cast<int64_t>(tokens.size()));
  ForwardResult out;
  std::vector<double> nlls;
  const int32_t row = 0;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    model.forward(Batch::causal(std::span(&tokens[i], 1), static_cast<int32_t>(i)), kv,
                  std::span(&row, 1), out, pool);
    kv.keep_all();
    long double sum = 0;
    for (float l : out.logits) sum += std::exp(static_cast<long double>(l));
    nlls.push_back(static_cast<double>(std::log(sum) - out.logits[tokens[i + 1]]));
  }
  return nlls;
}

struct Fixture {
  std::string dir;
  int vocab = 0;
  Fixture() {
    auto m = test::load_random_model("perplexity", test::tiny_config(), DType::BF16, 3, 0.3f);
    dir = m->dir();
    vocab = static_cast<int>(m->config().vocab_size);
  }
};

TEST(Perplexity, TokenNllsAreTheModelsNextTokenLogProbs) {
  const Fixture fx;
  const std::vector<int32_t> tokens = some_tokens(40, fx.vocab);
  auto engine = LlamaModel::load(fx.dir);
  const std::vector<double> want = reference_nlls(*engine, tokens);
  api::Model model = api::Model::load(fx.dir);
  api::Threads threads(2);
  const std::vector<double> got = api::token_nlls(model, tokens, 0, 1000, threads);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_GT(got[i], 0.0) << i;
    EXPECT_NEAR(got[i], want[i], 1e-6 * want[i]) << i;
  }
  // `first` drops the leading rows and nothing else.
  const std::vector<double> tail = api::token_nlls(model, tokens, 25, 1000, threads);
  EXPECT_EQ(tail, std::vector<double>(got.begin() + 25, got.end()));
}

TEST(Perplexity, ForwardSizeNeverChangesAFigure) {
  const Fixture fx;
  const std::vector<int32_t> tokens = some_tokens(50, fx.vocab);
  api::Model model = api::Model::load(fx.dir);
  api::Threads threads(2);
  const std::vector<double> whole = api::token_nlls(model, tokens, 20, 50, threads);
  ASSERT_EQ(whole.size(), 29u);
  for (const int64_t batch : {1, 7, 20, 21, 49})
    EXPECT_EQ(api::token_nlls(model, tokens, 20, batch, threads), whole) << "batch " << batch;
}

TEST(Perplexity, BadArgumentsAreErrors) {
  const Fixture fx;
  api::Model model = api::Model::load(fx.dir);
  api::Threads threads(1);
  const std::vector<int32_t> tokens = some_tokens(10, fx.vocab);
  const std::span<const int32_t> all(tokens);
  EXPECT_EQ(test::error_of([&] { api::token_nlls(model, all.first(1), 0, 8, threads); }),
            "token_nlls: 1 tokens; scoring needs at least 2");
  EXPECT_EQ(test::error_of([&] { api::token_nlls(model, all, 9, 8, threads); }),
            "token_nlls: the first scored row 9 is outside [0, 9)");
  EXPECT_EQ(test::error_of([&] { api::token_nlls(model, all, -1, 8, threads); }),
            "token_nlls: the first scored row -1 is outside [0, 9)");
  EXPECT_EQ(test::error_of([&] { api::token_nlls(model, all, 0, 0, threads); }),
            "token_nlls: the batch size must be at least 1 (got 0)");
  const std::vector<int32_t> long_text = some_tokens(513, fx.vocab);
  EXPECT_EQ(test::error_of([&] { api::token_nlls(model, long_text, 0, 64, threads); }),
            "513 tokens exceed the model's context of 512 positions");
  std::vector<int32_t> bad = tokens;
  bad[3] = fx.vocab;
  EXPECT_NE(test::error_of([&] { api::token_nlls(model, bad, 0, 8, threads); }), "");
}

TEST(Perplexity, EstimateIsExpMeanWithItsStandardError) {
  const std::vector<double> nlls = {1.0, 2.0, 3.0};
  const api::PerplexityEstimate e = api::estimate_perplexity(nlls);
  EXPECT_EQ(e.count, 3);
  EXPECT_DOUBLE_EQ(e.mean_nll, 2.0);
  EXPECT_DOUBLE_EQ(e.ppl, std::exp(2.0));
  // var = mean(x^2) - mean(x)^2 = 14/3 - 4 = 2/3; error = ppl * sqrt(var / (n - 1)).
  EXPECT_NEAR(e.error, std::exp(2.0) * std::sqrt(1.0 / 3.0), 1e-12);
  const std::vector<double> one = {0.5};
  EXPECT_EQ(api::estimate_perplexity(one).error, 0.0);
  EXPECT_DOUBLE_EQ(api::estimate_perplexity(one).ppl, std::exp(0.5));
  const std::vector<double> flat = {0.7, 0.7, 0.7, 0.7};
  EXPECT_NEAR(api::estimate_perplexity(flat).error, 0.0, 1e-6);
  EXPECT_EQ(test::error_of([] { api::estimate_perplexity({}); }), "perplexity: no scored tokens");
}

}  // namespace
}  // namespace eagle2
