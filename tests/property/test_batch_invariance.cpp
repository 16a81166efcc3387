// Batch invariance: the same token at the same position on the same context gives identical bits
// at batch sizes 1..64, whatever company it keeps, and with 1, 2 or 3 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "model/llama_model.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

void check_invariance(LlamaModel& m, uint32_t seed, int n_sizes) {
  std::mt19937 rng(seed);
  const int64_t V = m.config().vocab_size, d = m.config().hidden_size;
  std::vector<int32_t> context(17);
  for (auto& t : context) t = static_cast<int32_t>(rng() % V);
  const int32_t token = static_cast<int32_t>(rng() % V);
  const int32_t position = static_cast<int32_t>(context.size());

  auto run = [&](int batch_size, int threads, std::vector<float>& logits,
                 std::vector<float>& hidden) {
    ThreadPool pool(threads);
    KvCache kv = m.make_cache(128);
    ForwardResult out;
    m.forward(Batch::causal(context, 0), kv, {}, out, pool);
    kv.keep_all();
    // Our row at a random place among random company, all attached to the context only.
    Batch b;
    const int where = static_cast<int>(rng() % batch_size);
    for (int i = 0; i < batch_size; ++i) {
      b.tokens.push_back(i == where ? token : static_cast<int32_t>(rng() % V));
      b.positions.push_back(i == where ? position : position + static_cast<int32_t>(rng() % 20));
      b.parents.push_back(-1);
    }
    std::vector<int32_t> rows(batch_size);
    for (int i = 0; i < batch_size; ++i) rows[i] = i;
    m.forward(b, kv, rows, out, pool);
    logits.assign(out.logits.begin() + where * V, out.logits.begin() + (where + 1) * V);
    hidden.assign(out.hidden.begin() + where * d, out.hidden.begin() + (where + 1) * d);
  };

  std::vector<float> ref_logits, ref_hidden, logits, hidden;
  run(1, 1, ref_logits, ref_hidden);
  for (int threads : {1, 2, 3}) {
    for (int s = 0; s < n_sizes; ++s) {
      const int batch_size = s == 0 ? 64 : 1 + static_cast<int>(rng() % 64);
      run(batch_size, threads, logits, hidden);
      ASSERT_EQ(0, std::memcmp(logits.data(), ref_logits.data(), V * sizeof(float)))
          << "batch " << batch_size << ", " << threads << " threads";
      ASSERT_EQ(0, std::memcmp(hidden.data(), ref_hidden.data(), d * sizeof(float)));
    }
  }
}

class BatchInvariance : public ::testing::TestWithParam<DType> {};

TEST_P(BatchInvariance, SameBitsAtEveryBatchSizeAndThreadCount) {
  LlamaConfig cfg = test::tiny_config();
  cfg.intermediate_size = 200;  // odd multiples exercise the kernels' remainder tiles
  auto m = test::load_random_model(std::string("inv-") + dtype_name(GetParam()), cfg, GetParam());
  check_invariance(*m, 11, test::scaled(8));
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, BatchInvariance,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(BatchInvarianceReal, StoriesModel) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  auto m = LlamaModel::load(cfg.substr(0, cfg.rfind('/')));
  check_invariance(*m, 12, test::scaled(8));
}

}  // namespace
}  // namespace eagle2
