// The mixture-of-experts MLP (model/moe_ffn.h) at the row counts its kernels switch on: an expert
// receiving 1..64 rows (the multi-row quantized tiles and their tails) gives each row the bits it
// has alone; routing over many experts with ties; scratch bounded by chunking the rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/quant_blocks.h"
#include "io/gguf.h"
#include "model/decoder_stack.h"
#include "model/llama_model.h"
#include "model/moe_ffn.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

// Layer 0's router and experts of a random MoE GGUF file, bound as the model binds them.
struct MoeRowsLayer {
  std::unique_ptr<LlamaModel> model;
  std::unique_ptr<GgufFile> file;
  MoeShape shape;
  MoeWeights w;
};

MoeRowsLayer moe_rows_layer(const std::string& name, const LlamaConfig& cfg, DType dt) {
  MoeRowsLayer L;
  L.model = test::load_random_moe_model(name, cfg, dt);
  L.file = std::make_unique<GgufFile>(L.model->dir(), Residency::kMapInPlace);
  const LlamaConfig& c = L.model->config();
  L.shape = MoeShape{.hidden = c.hidden_size,
                     .experts = c.num_experts,
                     .used = c.num_experts_used,
                     .width = c.expert_intermediate_size,
                     .norm_topk_prob = c.norm_topk_prob};
  auto data = [&](const std::string& tensor) -> const unsigned char* {
    for (const GgufTensorInfo& t : L.file->tensors())
      if (t.name == tensor) return L.file->tensor_data(t);
    ADD_FAILURE() << tensor << " not found";
    return nullptr;
  };
  const int64_t E = L.shape.experts, d = L.shape.hidden, W = L.shape.width;
  L.w.router = Matrix{DType::F32, E, d, data("blk.0.ffn_gate_inp.weight")};
  auto stack = [&](const char* tensor, int64_t rows, int64_t cols, std::vector<Matrix>& out) {
    const unsigned char* base = data(tensor);
    for (int64_t e = 0; e < E; ++e)
      out.push_back(Matrix{dt, rows, cols, base + e * rows * dtype_bytes(dt, cols)});
  };
  stack("blk.0.ffn_gate_exps.weight", W, d, L.w.gate);
  stack("blk.0.ffn_up_exps.weight", W, d, L.w.up);
  stack("blk.0.ffn_down_exps.weight", d, W, L.w.down);
  return L;
}

std::vector<float> moe_rows_input(int64_t rows, int64_t d) {
  std::vector<float> x(static_cast<size_t>(rows * d));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
  return x;
}

// Two experts, both used: every row of a forward of T rows goes to each expert, so each expert's
// matrices run over exactly T gathered rows, T = 1..64 (17, 33, 63: one past a tile, one short).
TEST(MoeRows, EveryRowCountAnExpertReceivesGivesEachRowItsBitsAlone) {
  LlamaConfig cfg = test::tiny_moe_config(false);
  cfg.num_experts = 2;
  cfg.num_experts_used = 2;
  for (DType dt : {DType::Q8_0, DType::Q4_0}) {
    const MoeRowsLayer L = moe_rows_layer(std::string("rows-") + dtype_name(dt), cfg, dt);
    const int64_t d = L.shape.hidden, max_rows = 64;
    const std::vector<float> x = moe_rows_input(max_rows, d);
    std::vector<float> alone(x.size()), out(x.size());
    ThreadPool one(1), two(2);
    MoeFfn single(L.shape);
    for (int64_t i = 0; i < max_rows; ++i) single.forward(L.w, &x[i * d], 1, &alone[i * d], one);
    MoeFfn ffn(L.shape);
    for (int64_t T = 1; T <= max_rows; ++T) {
      ffn.forward(L.w, x.data(), T, out.data(), two);
      for (int64_t i = 0; i < T; ++i)
        ASSERT_EQ(std::memcmp(&out[i * d], &alone[i * d], d * sizeof(float)), 0)
            << dtype_name(dt) << ": row " << i << " of " << T << " rows per expert";
    }
  }
}

// Many experts with many equal logits: the top k by (probability desc, index asc), as a full
// stable sort of all E orders them.
TEST(MoeRows, RoutingOverManyExpertsWithTiesIsTheSortedTopK) {
  const MoeShape s{.hidden = 4, .experts = 200, .used = 8, .width = 4, .norm_topk_prob = false};
  for (int pattern = 1; pattern <= 4; ++pattern) {
    std::vector<float> logits(200);
    for (int e = 0; e < 200; ++e) logits[e] = static_cast<float>((e * (2 * pattern + 1)) % 5);
    std::vector<int32_t> order(200);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    int32_t ids[8];
    float w[8];
    moe_route(logits.data(), s, ids, w);
    for (int r = 0; r < 8; ++r)
      EXPECT_EQ(ids[r], order[r]) << "pattern " << pattern << " rank " << r;
  }
}

// A hostile router (NaN or infinite weights) makes NaN probabilities: the ranking stays an order
// (NaN below every number), and the chosen experts stay distinct and in range.
TEST(MoeRows, NanRouterLogitsStillChooseDistinctExperts) {
  const MoeShape s{.hidden = 4, .experts = 40, .used = 6, .width = 4, .norm_topk_prob = true};
  const float nan = std::nanf("");
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<float> logits(40);
    for (int e = 0; e < 40; ++e)
      logits[e] = pattern == 0 ? nan : (e % (pattern + 2) == 0 ? nan : static_cast<float>(e % 7));
    int32_t ids[6];
    float w[6];
    moe_route(logits.data(), s, ids, w);
    std::vector<int32_t> chosen(ids, ids + 6);
    std::sort(chosen.begin(), chosen.end());
    EXPECT_EQ(std::adjacent_find(chosen.begin(), chosen.end()), chosen.end()) << pattern;
    for (int32_t id : chosen) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, 40);
    }
  }
}

// A forward of more rows than the scratch bound holds runs in chunks: the same bits, scratch
// within the bound.
TEST(MoeRows, ScratchIsBoundedByRunningTheRowsInChunks) {
  const MoeRowsLayer L = moe_rows_layer("rows-chunks", test::tiny_moe_config(true), DType::F32);
  const MoeShape& s = L.shape;
  const int64_t d = s.hidden, T = 16;
  const int64_t per_row = s.experts + s.used * (3 + 2 * s.hidden + 2 * s.width);
  const std::vector<float> x = moe_rows_input(T, d);
  std::vector<float> whole(x.size()), chunked(x.size());
  ThreadPool pool(2);
  MoeFfn big(s);
  big.forward(L.w, x.data(), T, whole.data(), pool);
  MoeFfn small(s, 3 * per_row);
  small.forward(L.w, x.data(), T, chunked.data(), pool);
  EXPECT_EQ(std::memcmp(whole.data(), chunked.data(), whole.size() * sizeof(float)), 0);
  EXPECT_LE(small.scratch_elements(), 3 * per_row);
  EXPECT_GT(big.scratch_elements(), 3 * per_row);
}

// The dense MLP's scratch is not grown for an MoE model: its intermediate_size (qwen3moe's
// feed_forward_length) sizes no tensor, and a hostile file could put 2^20 there. A dense model
// grows it by its forwards.
TEST(MoeRows, DenseMlpScratchIsNotGrownForAMixtureOfExperts) {
  LlamaConfig cfg = test::tiny_moe_config(true);
  cfg.intermediate_size = int64_t{1} << 20;
  auto moe = test::load_random_moe_model("dense-scratch", cfg, DType::F32);
  auto dense = test::load_random_model("dense-scratch", test::tiny_config());
  ThreadPool pool(1);
  for (LlamaModel* model : {moe.get(), dense.get()}) {
    KvCache kv = model->make_cache(16);
    const std::vector<int32_t> tokens = {1, 2, 3};
    const Batch b = Batch::causal(tokens, 0);
    ForwardResult r;
    const int32_t last[] = {2};
    model->forward(b, kv, last, r, pool);
  }
  EXPECT_EQ(moe->dense_mlp_scratch(), 0u);
  EXPECT_EQ(dense->dense_mlp_scratch(), 2u * 3 * test::tiny_config().intermediate_size);
}

}  // namespace
}  // namespace eagle2
