// Lossless on mixture-of-experts targets: random Mixtral- and Qwen3-MoE-shape GGUF files, decoded
// greedily with every drafter kind (a random EAGLE head, lookup, suffix, scripted oracles), give
// plain greedy decoding's tokens, alone and in batches (BatchDecoder over one KV pool, continuous
// joins). A verify batch routes each tree node to its own experts beside nodes routed elsewhere:
// only if a row's experts and their sum do not depend on its company (model/moe_ffn.h) are the
// accepted tokens plain decoding's.
#include <gtest/gtest.h>

#include "draft/eagle_head.h"
#include "support/batch_runs.h"
#include "support/equality_runs.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

void check_moe_equality(bool qwen3moe, DType dtype) {
  const std::string name = std::string(qwen3moe ? "eq-q3-" : "eq-mix-") + dtype_name(dtype);
  auto target = test::load_random_moe_model(name, test::tiny_moe_config(qwen3moe), dtype);
  // The Qwen3-MoE head keeps its target's expert fields in its config, as train-head writes it
  // (and published Mixtral heads ship Mixtral's config): its one layer is still dense.
  auto head = EagleHead::load(
      test::write_random_head(name, *target, 5, 0.15f, /*keep_expert_fields=*/qwen3moe), *target);
  const int64_t V = target->config().vocab_size;
  ThreadPool pool(2);
  // Random prompts, and one that repeats itself (lookup and suffix then draft from it).
  auto prompts = test::random_prompts(11, test::test_scale() < 1.0 ? 2 : 3, V);
  std::vector<int32_t> repeated;
  for (int r = 0; r < 4; ++r)
    for (int32_t t : {5, 17, 230, 41, 99}) repeated.push_back(t);
  prompts.push_back(repeated);
  GenerationOptions opt;
  opt.max_new_tokens = 24;
  test::Coverage cov;
  test::check_equality(*target, test::drafter_cases(*head, pool, V, 256), prompts, opt, 256, pool,
                       cov);
  EXPECT_GT(cov.at("scripted", 2), 0) << name << ": the oracle never had several tokens accepted";
  test::BatchRunOptions batch;
  batch.sequence_counts = {4};
  batch.ctx = 256;
  EXPECT_EQ(test::check_batch_equality(*target, test::drafter_cases(*head, pool, V, 256), prompts,
                                       batch, pool),
            4)
      << name;
}

TEST(MoeEquality, MixtralShapeEveryDrafterAloneAndInABatch) {
  check_moe_equality(false, DType::F32);
}

TEST(MoeEquality, Qwen3MoeShapeQ8_0EveryDrafterAloneAndInABatch) {
  check_moe_equality(true, DType::Q8_0);
}

}  // namespace
}  // namespace eagle2
