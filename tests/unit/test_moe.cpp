// Mixture-of-experts models (Mixtral, Qwen3-MoE; model/moe_ffn.h): routing as llama.cpp routes,
// the expert MLP against a plain per-row reference, batch invariance of whole-model logits in any
// company and thread count, one read of each expert per forward, and hostile files and configs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "io/gguf.h"
#include "model/cost_curve.h"
#include "model/llama_model.h"
#include "model/moe_ffn.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

void expect_moe_error(const std::function<void()>& f, const std::string& part) {
  const std::string message = test::error_of(f);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

MoeShape moe_test_shape(int64_t experts, int64_t used, bool norm) {
  return MoeShape{
      .hidden = 4, .experts = experts, .used = used, .width = 4, .norm_topk_prob = norm};
}

TEST(MoeRouting, TopKBySoftmaxProbabilityRenormalisedWhenAsked) {
  const float logits[] = {0.5f, 2.0f, -1.0f, 1.0f};
  int32_t ids[2];
  float w[2];
  moe_route(logits, moe_test_shape(4, 2, false), ids, w);
  double sum = 0;
  for (float l : logits) sum += std::exp(l - 2.0);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);
  EXPECT_NEAR(w[0], 1.0 / sum, 1e-6);
  EXPECT_NEAR(w[1], std::exp(-1.0) / sum, 1e-6);
  // Renormalised: Mixtral's softmax over the two chosen logits.
  moe_route(logits, moe_test_shape(4, 2, true), ids, w);
  EXPECT_NEAR(w[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(w[1], std::exp(-1.0) / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_FLOAT_EQ(w[0] + w[1], 1.0f);
}

TEST(MoeRouting, TiesGoToTheLowerExpertInRankOrder) {
  const float logits[] = {1.0f, 3.0f, 1.0f, 3.0f, 1.0f};
  int32_t ids[3];
  float w[3];
  moe_route(logits, moe_test_shape(5, 3, true), ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);
  EXPECT_EQ(ids[2], 0);
  EXPECT_EQ(w[0], w[1]);
}

TEST(MoeRouting, AllExpertsUsedKeepsTheirOrderAndSumsToOne) {
  const float logits[] = {-3.0f, 4.0f, 0.0f};
  int32_t ids[3];
  float w[3];
  moe_route(logits, moe_test_shape(3, 3, true), ids, w);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 2);
  EXPECT_EQ(ids[2], 0);
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-6);
}

// The expert MLP of a loaded model against a per-row reference written here: route, run each
// chosen expert alone in double, weight and add. Wrong routing, a wrong expert slice or a wrong
// weight moves the output far beyond the tolerance.
float silu_ref(double v) {
  return static_cast<float>(v / (1.0 + std::exp(-v)));
}
std::vector<float> moe_reference_row(const MoeWeights& w, const MoeShape& s, const float* x) {
  auto row_dot = [&](const Matrix& m, int64_t r, const float* v) {
    const float* row = static_cast<const float*>(m.data) + r * m.cols;
    double acc = 0;
    for (int64_t j = 0; j < m.cols; ++j) acc += static_cast<double>(row[j]) * v[j];
    return acc;
  };
  std::vector<float> logits(static_cast<size_t>(s.experts));
  for (int64_t e = 0; e < s.experts; ++e) logits[e] = static_cast<float>(row_dot(w.router, e, x));
  std::vector<int32_t> ids(static_cast<size_t>(s.used));
  std::vector<float> weights(static_cast<size_t>(s.used));
  moe_route(logits.data(), s, ids.data(), weights.data());
  std::vector<float> out(static_cast<size_t>(s.hidden), 0.0f), h(static_cast<size_t>(s.width));
  for (int64_t r = 0; r < s.used; ++r) {
    const int32_t e = ids[r];
    for (int64_t i = 0; i < s.width; ++i)
      h[i] = silu_ref(row_dot(w.gate[e], i, x)) * static_cast<float>(row_dot(w.up[e], i, x));
    for (int64_t j = 0; j < s.hidden; ++j)
      out[j] += weights[r] * static_cast<float>(row_dot(w.down[e], j, h.data()));
  }
  return out;
}

TEST(MoeModel, ExpertMlpMatchesAPerRowReferenceAndReadsEachExpertOncePerForward) {
  for (bool qwen : {false, true}) {
    const LlamaConfig cfg = test::tiny_moe_config(qwen);
    auto model = test::load_random_moe_model(qwen ? "ref-q3" : "ref-mix", cfg);
    // The shape as the loaded model has it (a loader that lost norm_topk_prob shows here).
    const LlamaConfig& mc = model->config();
    const MoeShape s{.hidden = mc.hidden_size,
                     .experts = mc.num_experts,
                     .used = mc.num_experts_used,
                     .width = mc.expert_intermediate_size,
                     .norm_topk_prob = mc.norm_topk_prob};
    // Layer 0's experts, bound from the loaded file's tensors as the model binds them.
    const GgufFile file(model->dir(), Residency::kMapInPlace);
    MoeWeights w;
    {
      auto slices = [&](const char* name) {
        const GgufTensorInfo* t = nullptr;
        for (const GgufTensorInfo& i : file.tensors())
          if (i.name == name) t = &i;
        EXPECT_NE(t, nullptr) << name;
        return t;
      };
      const GgufTensorInfo* router = slices("blk.0.ffn_gate_inp.weight");
      ASSERT_EQ(router->type, 0u) << "the router stays F32";
      w.router = Matrix{DType::F32, s.experts, s.hidden, file.tensor_data(*router)};
      auto stack = [&](const char* name, int64_t rows, int64_t cols, std::vector<Matrix>& out) {
        const auto* base = reinterpret_cast<const float*>(file.tensor_data(*slices(name)));
        for (int64_t e = 0; e < s.experts; ++e)
          out.push_back(Matrix{DType::F32, rows, cols, base + e * rows * cols});
      };
      stack("blk.0.ffn_gate_exps.weight", s.width, s.hidden, w.gate);
      stack("blk.0.ffn_up_exps.weight", s.width, s.hidden, w.up);
      stack("blk.0.ffn_down_exps.weight", s.hidden, s.width, w.down);
    }
    const int64_t T = 16, d = s.hidden;
    std::vector<float> x(static_cast<size_t>(T * d)), out(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
    ThreadPool pool(2);
    MoeFfn ffn(s);
    ffn.forward(w, x.data(), T, out.data(), pool);
    // Each routed expert's matrices once for all its rows: at most E passes, never one per row.
    EXPECT_LE(ffn.experts_touched(), s.experts);
    EXPECT_GE(ffn.experts_touched(), s.used);
    for (int64_t i = 0; i < T; ++i) {
      const std::vector<float> ref = moe_reference_row(w, s, &x[i * d]);
      for (int64_t j = 0; j < d; ++j)
        EXPECT_NEAR(out[i * d + j], ref[j], 1e-4f * (1 + std::abs(ref[j]))) << i << "," << j;
      // And alone: the same bits as in the batch of 16.
      std::vector<float> alone(static_cast<size_t>(d));
      MoeFfn single(s);
      single.forward(w, &x[i * d], 1, alone.data(), pool);
      EXPECT_EQ(std::memcmp(alone.data(), &out[i * d], d * sizeof(float)), 0) << "row " << i;
    }
  }
}

// Whole-model logits of a row are bit-identical alone and in any company (rows of other
// sequences routed to other experts), for 1 to 3 threads and every dtype make-random writes.
void check_model_batch_invariance(const LlamaModel& model, const std::string& what) {
  const int64_t V = model.config().vocab_size;
  const int n_seq = 6;
  auto token_of = [&](int s, int t) { return static_cast<int32_t>((37 * s + 11 * t + 5) % V); };
  // Each sequence's 4-token prompt alone, one thread: the reference logits of its last row.
  std::vector<std::vector<float>> alone(n_seq);
  {
    ThreadPool pool(1);
    for (int s = 0; s < n_seq; ++s) {
      KvCache kv = model.make_cache(64);
      const std::vector<int32_t> tokens = {token_of(s, 0), token_of(s, 1), token_of(s, 2),
                                           token_of(s, 3)};
      const Batch b = Batch::causal(tokens, 0);
      ForwardResult r;
      const int32_t last[] = {3};
      const_cast<LlamaModel&>(model).forward(b, kv, last, r, pool);
      alone[s] = r.logits;
    }
  }
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int company = 1; company <= n_seq; ++company) {
      std::vector<KvCache> caches;
      for (int s = 0; s < company; ++s) caches.push_back(model.make_cache(64));
      std::vector<KvCache*> ptrs;
      for (KvCache& c : caches) ptrs.push_back(&c);
      Batch b;
      std::vector<int32_t> last;
      for (int s = 0; s < company; ++s) {
        const std::vector<int32_t> tokens = {token_of(s, 0), token_of(s, 1), token_of(s, 2),
                                             token_of(s, 3)};
        b.append(Batch::causal(tokens, 0), s);
        last.push_back(static_cast<int32_t>(b.size() - 1));
      }
      ForwardResult r;
      const_cast<LlamaModel&>(model).forward(b, ptrs, last, r, pool);
      for (int s = 0; s < company; ++s)
        EXPECT_EQ(std::memcmp(&r.logits[s * V], alone[s].data(), V * sizeof(float)), 0)
            << what << ": sequence " << s << " of " << company << ", " << threads << " threads";
    }
  }
}

TEST(MoeModel, LogitsOfARowAreTheSameBitsInAnyCompanyEveryDtype) {
  for (bool qwen : {false, true})
    for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0}) {
      const std::string name = std::string(qwen ? "bi-q3-" : "bi-mix-") + dtype_name(dt);
      auto model = test::load_random_moe_model(name, test::tiny_moe_config(qwen), dt);
      check_model_batch_invariance(*model, name);
    }
}

// cost-curve's experts column: one token reads exactly its k experts per layer; 64 tokens of one
// tree read the union of theirs, more than k and at most E (never one pass per token).
TEST(MoeModel, CostCurveCountsTheExpertsAForwardReads) {
  auto model = test::load_random_moe_model("cost", test::tiny_moe_config(false));
  ThreadPool pool(1);
  CostCurveOptions opt;
  opt.ks = {1, 64};
  opt.context = 8;
  opt.repetitions = 1;
  const std::vector<CostPoint> curve = measure_cost_curve(*model, opt, pool);
  ASSERT_EQ(curve.size(), 2u);
  EXPECT_EQ(curve[0].experts, 2.0);
  EXPECT_GT(curve[1].experts, 2.0);
  EXPECT_LE(curve[1].experts, 8.0);
  auto dense = test::load_random_model("cost-dense", test::tiny_config());
  EXPECT_EQ(measure_cost_curve(*dense, opt, pool)[0].experts, 0.0);
}

TEST(MoeConfig, ExpertCountsAreReadAndCheckedWithOneClearError) {
  const std::string base =
      R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100)";
  const LlamaConfig c = LlamaConfig::parse(
      base + R"(, "num_local_experts": 8, "num_experts_per_tok": 2})", "config.json");
  EXPECT_EQ(c.num_experts, 8);
  EXPECT_EQ(c.num_experts_used, 2);
  EXPECT_EQ(c.expert_intermediate_size, 128);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_EQ(LlamaConfig::parse(c.to_json(), "again").num_experts, 8);
  expect_moe_error(
      [&] {
        (void)LlamaConfig::parse(base + R"(, "num_local_experts": 2, "num_experts_per_tok": 3})",
                                 "c");
      },
      "num_experts_per_tok (3) is more than num_local_experts (2)");
  expect_moe_error(
      [&] {
        (void)LlamaConfig::parse(base + R"(, "num_local_experts": 0, "num_experts_per_tok": 1})",
                                 "c");
      },
      "\"num_local_experts\" must be positive");
  expect_moe_error(
      [&] {
        (void)LlamaConfig::parse(
            base + R"(, "num_local_experts": 100000, "num_experts_per_tok": 1})", "c");
      },
      "more than the supported maximum");
  expect_moe_error([&] { (void)LlamaConfig::parse(base + "}", "c"); }, "\"num_local_experts\"");
  const std::string qwen =
      R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 1048576,
          "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
          "head_dim": 8, "vocab_size": 100, "num_experts": 4096, "num_experts_per_tok": 8,
          "moe_intermediate_size": 1048576})";
  expect_moe_error([&] { (void)LlamaConfig::parse(qwen, "c"); },
                   "size of one layer's stacked experts");
}

// A GGUF file's u32 metadata value patched in place (the key is unique in the file).
void patch_gguf_u32(const std::string& path, const std::string& key, uint32_t value) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const size_t at = bytes.find(key);
  ASSERT_NE(at, std::string::npos) << key;
  std::memcpy(&bytes[at + key.size() + 4], &value, 4);  // after the key: type (u32), value
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(MoeHostile, ExpertCountsAndShapesOfAFileAreChecked) {
  auto model = test::load_random_moe_model("hostile", test::tiny_moe_config(false));
  const std::string good = model->dir();
  const std::string dir = test::temp_dir("moe-hostile-copies");
  auto copy_with = [&](const char* name, const char* key, uint32_t value) {
    const std::string path = dir + "/" + name + ".gguf";
    std::filesystem::copy_file(good, path, std::filesystem::copy_options::overwrite_existing);
    patch_gguf_u32(path, key, value);
    return path;
  };
  expect_moe_error([&] { (void)LlamaModel::load(copy_with("used", "llama.expert_used_count", 9)); },
                   "num_experts_per_tok (9) is more than num_local_experts (8)");
  // k is capped far below E's cap: routing, scratch and each row's sum scale with it.
  expect_moe_error(
      [&] { (void)LlamaModel::load(copy_with("many", "llama.expert_used_count", 65)); },
      "\"num_experts_per_tok\" is 65, more than the supported maximum 64");
  expect_moe_error(
      [&] { (void)LlamaModel::load(copy_with("huge", "llama.expert_count", 0xfffffff0u)); },
      "more than the supported maximum");
  // Fewer experts than the stacked tensors hold: the shapes disagree, named.
  expect_moe_error([&] { (void)LlamaModel::load(copy_with("fewer", "llama.expert_count", 4)); },
                   "mlp.gate.weight' has shape");
  // A Hugging Face folder of an MoE (one tensor per expert) is refused before any tensor is read.
  {
    const std::string folder = test::temp_dir("moe-hf-folder");
    std::ofstream(folder + "/config.json") << test::tiny_moe_config(true).to_json();
    expect_moe_error([&] { (void)LlamaModel::load(folder); }, "runs from a GGUF file");
  }
  // No experts at all: the file is a dense model without its MLP.
  expect_moe_error([&] { (void)LlamaModel::load(copy_with("dense", "llama.expert_count", 0)); },
                   "mlp.gate_proj.weight' not found");
}

}  // namespace
}  // namespace eagle2
