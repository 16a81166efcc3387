// ForwardCapture: the target's decoder-layer inputs (EAGLE-3 features) taken in the same forward.
// Capture must not change a bit of the forward, must return exactly the residual stream before the
// asked layers (pinned against the embedding and against the same model cut to fewer layers), must
// be batch- and chunk-invariant like everything else the forward returns, and bad requests get one
// clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "kernels/ops.h"
#include "model/llama_model.h"
#include "model/random_model.h"
#include "speculative/generation.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "train/head_data.h"

namespace eagle2 {
namespace {

constexpr int kLayers = 4;

LlamaConfig four_layers() {
  LlamaConfig c = test::tiny_config();
  c.num_layers = kLayers;
  return c;
}

// The random 4-layer model's folder (written once per binary) and the model loaded from it.
const std::string& model_dir() {
  static const std::string dir = [] {
    const std::string d = test::temp_dir("capture-model");
    write_random_model(d, four_layers(), DType::F32, 11, 0.15f);
    return d;
  }();
  return dir;
}

std::vector<int32_t> iota_rows(int64_t n) {
  std::vector<int32_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

bool same_capture_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const std::vector<int32_t> kPrompt = {1, 17, 40, 5, 88, 23, 9, 61, 30, 2, 77, 14, 50};

class TargetCapture : public ::testing::Test {
 protected:
  void SetUp() override { model_ = LlamaModel::load(model_dir()); }
  int64_t d() const { return model_->config().hidden_size; }
  std::unique_ptr<LlamaModel> model_;
  ThreadPool pool_{2};
};

TEST_F(TargetCapture, PrefillWithCaptureIsBitIdentical) {
  const std::vector<int32_t> layers = {3, 0, 2};
  for (int64_t chunk : {1, 4, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    KvCache kv_plain = model_->make_cache(64), kv_cap = model_->make_cache(64);
    ForwardResult plain, cap;
    prefill(*model_, kv_plain, kPrompt, chunk, plain, pool_);
    prefill(*model_, kv_cap, kPrompt, chunk, cap, pool_, layers);
    EXPECT_TRUE(same_capture_bits(plain.logits, cap.logits));
    EXPECT_TRUE(same_capture_bits(plain.hidden, cap.hidden));
    EXPECT_TRUE(plain.captured.empty());
    EXPECT_EQ(cap.captured.size(), kPrompt.size() * layers.size() * static_cast<size_t>(d()));
    // The caches hold the same keys and values too: the next forward agrees.
    const std::vector<int32_t> next = {33};
    const int32_t row0 = 0;
    for (auto* kv : {&kv_plain, &kv_cap})
      model_->forward(Batch::causal(next, static_cast<int32_t>(kPrompt.size())), *kv,
                      std::span(&row0, 1), kv == &kv_plain ? plain : cap, pool_);
    EXPECT_TRUE(same_capture_bits(plain.logits, cap.logits));
  }
}

TEST_F(TargetCapture, TreeBatchWithCaptureIsBitIdentical) {
  const std::vector<int32_t> tokens = {5, 9, 12, 40, 3, 70, 8}, parents = {-1, 0, 0, 1, 1, 2, 5};
  const Batch tree = Batch::tree(tokens, parents, static_cast<int32_t>(kPrompt.size()));
  const std::vector<int32_t> all = iota_rows(tree.size()), layers = {1, 3}, rows = {6, 0, 3};
  ForwardResult plain, cap;
  for (ForwardResult* out : {&plain, &cap}) {
    KvCache kv = model_->make_cache(64);
    ForwardResult pre;
    prefill(*model_, kv, kPrompt, 5, pre, pool_);
    model_->forward(tree, kv, all, *out, pool_,
                    out == &cap ? ForwardCapture{layers, rows} : ForwardCapture{});
  }
  EXPECT_TRUE(same_capture_bits(plain.logits, cap.logits));
  EXPECT_TRUE(same_capture_bits(plain.hidden, cap.hidden));
  EXPECT_EQ(cap.captured.size(), rows.size() * layers.size() * static_cast<size_t>(d()));
}

// Three sequences over one KV pool, their rows interleaved in one forward (prompts, then a tree
// each): with or without capturing a subset of the rows, every output is the same; and each
// captured row equals its sequence run alone (batch invariance across sequences).
TEST_F(TargetCapture, MultiSequenceCaptureIsBitIdenticalAndPerRow) {
  const std::vector<std::vector<int32_t>> prompts = {{1, 4, 9, 16}, {1, 30, 31}, {1, 50, 2, 7, 7}};
  const std::vector<int32_t> layers = {2, 0, 3};
  const int64_t K = static_cast<int64_t>(layers.size());
  Batch all;
  for (size_t s = 0; s < prompts.size(); ++s) {
    const std::vector<int32_t> t = {static_cast<int32_t>(60 + s), 3, 8};
    const std::vector<int32_t> p = {-1, 0, 0};
    all.append(Batch::tree(t, p, static_cast<int32_t>(prompts[s].size())), static_cast<int32_t>(s));
  }
  // Interleave the sequences' rows: 0 3 6 1 4 7 2 5 8 (parents stay earlier rows).
  Batch mixed;
  std::vector<int32_t> to_mixed(all.tokens.size());
  for (int32_t j = 0; j < 3; ++j)
    for (int32_t s = 0; s < 3; ++s) {
      const int32_t r = 3 * s + j;
      to_mixed[r] = static_cast<int32_t>(mixed.tokens.size());
      mixed.tokens.push_back(all.tokens[r]);
      mixed.positions.push_back(all.positions[r]);
      mixed.sequences.push_back(all.sequences[r]);
      mixed.parents.push_back(all.parents[r] < 0 ? -1 : to_mixed[all.parents[r]]);
    }
  const std::vector<int32_t> rows = {8, 1, 3, 4};  // a subset, out of order
  const std::vector<int32_t> logit_rows = iota_rows(mixed.size());
  auto run = [&](const ForwardCapture& capture) {
    auto kv_pool = model_->make_pool(3 * 64, 16);
    std::vector<KvCache> caches;
    for (size_t s = 0; s < prompts.size(); ++s) caches.push_back(model_->make_cache(kv_pool, 64));
    ForwardResult out;
    for (size_t s = 0; s < prompts.size(); ++s)
      prefill(*model_, caches[s], prompts[s], 64, out, pool_);
    std::vector<KvCache*> ptrs;
    for (auto& c : caches) ptrs.push_back(&c);
    model_->forward(mixed, ptrs, logit_rows, out, pool_, capture);
    return out;
  };
  const ForwardResult plain = run({}), cap = run({layers, rows});
  EXPECT_TRUE(same_capture_bits(plain.logits, cap.logits));
  EXPECT_TRUE(same_capture_bits(plain.hidden, cap.hidden));
  ASSERT_EQ(cap.captured.size(), rows.size() * K * static_cast<size_t>(d()));

  for (size_t j = 0; j < rows.size(); ++j) {
    const int32_t s = mixed.sequences[rows[j]];
    SCOPED_TRACE("row " + std::to_string(rows[j]) + " of sequence " + std::to_string(s));
    // The same sequence alone, its own tree as the batch.
    KvCache kv = model_->make_cache(64);
    ForwardResult out;
    prefill(*model_, kv, prompts[static_cast<size_t>(s)], 64, out, pool_);
    const std::vector<int32_t> t = {60 + s, 3, 8}, p = {-1, 0, 0};
    int32_t local = 0;  // the row's index within its own sequence's batch
    for (int32_t r = 0; r < rows[j]; ++r) local += mixed.sequences[r] == s;
    const std::vector<int32_t> one = {local};
    model_->forward(Batch::tree(t, p, static_cast<int32_t>(prompts[s].size())), kv, {}, out, pool_,
                    {layers, one});
    EXPECT_EQ(std::memcmp(out.captured.data(), &cap.captured[j * K * d()], K * d() * sizeof(float)),
              0);
  }
}

TEST_F(TargetCapture, LayerZeroIsTheEmbedding) {
  KvCache kv = model_->make_cache(64);
  ForwardResult out;
  const std::vector<int32_t> layers = {0};
  prefill(*model_, kv, kPrompt, 64, out, pool_, layers);
  std::vector<float> e(static_cast<size_t>(d()));
  for (size_t i = 0; i < kPrompt.size(); ++i) {
    model_->embed(kPrompt[i], e.data());
    EXPECT_EQ(std::memcmp(e.data(), &out.captured[i * d()], d() * sizeof(float)), 0) << i;
  }
}

// The rows are captured as the layers and rows are asked: duplicates and any order included.
TEST_F(TargetCapture, OrderOfLayersAndRowsIsKept) {
  KvCache kv = model_->make_cache(64);
  ForwardResult every;
  const std::vector<int32_t> ascending = {0, 1, 2, 3};
  prefill(*model_, kv, kPrompt, 64, every, pool_, ascending);
  const std::vector<int32_t> layers = {3, 1, 3}, rows = {7, 2, 7};
  KvCache kv2 = model_->make_cache(64);
  ForwardResult out;
  model_->forward(Batch::causal(kPrompt, 0), kv2, {}, out, pool_, {layers, rows});
  const int64_t K = 3;
  for (size_t j = 0; j < rows.size(); ++j)
    for (size_t k = 0; k < layers.size(); ++k)
      EXPECT_EQ(std::memcmp(&out.captured[(j * K + k) * d()],
                            &every.captured[(rows[j] * 4 + layers[k]) * d()], d() * sizeof(float)),
                0)
          << j << " " << k;
}

// A position's captured states do not depend on how the prompt was cut into chunks nor on the
// company of its batch: chunked prefills, and decoding one token at a time, give the same bits.
TEST_F(TargetCapture, ChunkAndBatchInvariant) {
  const std::vector<int32_t> layers = {1, 2, 3};
  const size_t width = layers.size() * static_cast<size_t>(d());
  std::vector<float> whole;
  {
    KvCache kv = model_->make_cache(64);
    ForwardResult out;
    prefill(*model_, kv, kPrompt, 64, out, pool_, layers);
    whole = out.captured;
  }
  for (int64_t chunk : {1, 3, 5}) {
    KvCache kv = model_->make_cache(64);
    ForwardResult out;
    prefill(*model_, kv, kPrompt, chunk, out, pool_, layers);
    EXPECT_TRUE(same_capture_bits(out.captured, whole)) << "chunk " << chunk;
  }
  // Row i alone (the rest of the prompt committed before it), one forward per token.
  KvCache kv = model_->make_cache(64);
  ForwardResult out;
  const int32_t row0 = 0;
  for (size_t i = 0; i < kPrompt.size(); ++i) {
    model_->forward(Batch::causal(std::span(&kPrompt[i], 1), static_cast<int32_t>(i)), kv, {}, out,
                    pool_, {layers, std::span(&row0, 1)});
    kv.keep_all();
    EXPECT_EQ(std::memcmp(out.captured.data(), &whole[i * width], width * sizeof(float)), 0) << i;
  }
}

// The model folder cut to its first `n` layers: config.json says n, later layers' tensors dropped.
std::string cut_model(int n) {
  const std::string dir = test::temp_dir("capture-cut-" + std::to_string(n));
  LlamaConfig c = four_layers();
  c.num_layers = n;
  test::write_file(dir + "/config.json", c.to_json());
  const TensorStore store = TensorStore::open_dir(model_dir());
  std::vector<TensorToWrite> kept;
  for (const auto& [name, t] : store.tensors()) {
    bool later = false;
    for (int l = n; l < kLayers; ++l)
      later = later || name.starts_with("model.layers." + std::to_string(l) + ".");
    if (!later) kept.push_back({name, t.dtype, t.shape, t.data});
  }
  write_safetensors(dir + "/model.safetensors", kept);
  return dir;
}

// The input of layer l is the output of the first l layers: through the final norm it is what
// the model cut to l layers returns as its hidden state, bit for bit (the same stack code runs).
TEST_F(TargetCapture, InputOfLayerLIsTheModelCutToLLayers) {
  const TensorStore store = TensorStore::open_dir(model_dir());
  const TensorView& norm = store.get("model.norm.weight");
  ASSERT_EQ(norm.dtype, DType::F32);
  const auto* final_norm = static_cast<const float*>(norm.data);
  const std::vector<int32_t> tokens = {1, 8, 19, 4, 66, 2, 31};
  for (int l = 1; l < kLayers; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const std::vector<int32_t> layers = {l};
    KvCache kv = model_->make_cache(64);
    ForwardResult full;
    prefill(*model_, kv, tokens, 3, full, pool_, layers);
    auto cut = LlamaModel::load(cut_model(l));
    ASSERT_EQ(cut->config().num_layers, l);
    KvCache kv_cut = cut->make_cache(64);
    ForwardResult short_run;
    prefill(*cut, kv_cut, tokens, 3, short_run, pool_);
    std::vector<float> normed(full.captured.size());
    for (size_t i = 0; i < tokens.size(); ++i)
      rmsnorm(&full.captured[i * d()], final_norm, model_->config().rms_norm_eps, &normed[i * d()],
              d());
    EXPECT_TRUE(same_capture_bits(normed, short_run.hidden));
  }
}

TEST_F(TargetCapture, BadLayersAndRowsAreClearErrors) {
  KvCache kv = model_->make_cache(64);
  ForwardResult out;
  const std::vector<int32_t> ids = {1, 2, 3};
  const std::vector<int32_t> ok_rows = {0, 2}, ok_layers = {0, 3};
  for (int32_t layer : {-1, 4}) {
    const std::vector<int32_t> layers = {0, layer};
    EXPECT_EQ(test::error_of([&] {
                model_->forward(Batch::causal(ids, 0), kv, {}, out, pool_, {layers, ok_rows});
              }),
              "forward: capture layer " + std::to_string(layer) + " outside the model's 4 layers");
    EXPECT_EQ(test::error_of([&] { prefill(*model_, kv, ids, 2, out, pool_, layers); }),
              "forward: capture layer " + std::to_string(layer) + " outside the model's 4 layers");
  }
  for (int32_t row : {-1, 3}) {
    const std::vector<int32_t> rows = {0, row};
    EXPECT_EQ(test::error_of([&] {
                model_->forward(Batch::causal(ids, 0), kv, {}, out, pool_, {ok_layers, rows});
              }),
              "forward: capture row " + std::to_string(row) + " outside the batch of 3");
  }
  // Refused before anything was reserved or run: the cache is as it was.
  EXPECT_EQ(kv.size(), 0);
  EXPECT_EQ(kv.pending(), 0);
  // Layers without rows (or rows without layers) capture nothing and are fine.
  model_->forward(Batch::causal(ids, 0), kv, {}, out, pool_, {ok_layers, {}});
  EXPECT_TRUE(out.captured.empty());
}

TEST_F(TargetCapture, ForwardCallsCountsForwardsThatRan) {
  const int64_t before = model_->forward_calls();
  KvCache kv = model_->make_cache(64);
  ForwardResult out;
  prefill(*model_, kv, kPrompt, 5, out, pool_);  // 13 tokens: 3 chunks
  EXPECT_EQ(model_->forward_calls(), before + 3);
  model_->forward(Batch{}, kv, {}, out, pool_);  // no rows: nothing ran
  EXPECT_EQ(model_->forward_calls(), before + 3);
  const std::vector<int32_t> bad = {20};
  test::error_of([&] { model_->forward(Batch::causal(kPrompt, 0), kv, bad, out, pool_); });
  EXPECT_EQ(model_->forward_calls(), before + 3);
  const std::vector<int32_t> layers = {1};
  model_->forward(Batch::causal(std::span(kPrompt).first(2), 13), kv, {}, out, pool_,
                  {layers, std::vector<int32_t>{0, 1}});
  EXPECT_EQ(model_->forward_calls(), before + 4);
}

// Head training data: the captured layers are recorded as aux from the same prefill when asked,
// and nothing else changes (the final-norm features keep their bits; no aux when not asked).
TEST_F(TargetCapture, HeadDataRecordsAuxOnlyWhenAsked) {
  const std::vector<int32_t> layers = {2, 1, 3};
  const size_t width = layers.size() * static_cast<size_t>(d());
  const std::vector<std::vector<int32_t>> prompts = {{1, 5, 6, 7}, {1, 40}};
  train::SelfDistillOptions plain_opt;
  plain_opt.max_new_tokens = 6;
  train::SelfDistillOptions aux_opt = plain_opt;
  aux_opt.feature_layers = layers;
  const auto plain = train::self_distill(*model_, prompts, plain_opt, pool_);
  const auto with_aux = train::self_distill(*model_, prompts, aux_opt, pool_);
  ASSERT_EQ(plain.size(), with_aux.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    SCOPED_TRACE("sequence " + std::to_string(i));
    EXPECT_EQ(plain[i].tokens, with_aux[i].tokens);
    EXPECT_TRUE(same_capture_bits(plain[i].features, with_aux[i].features));
    EXPECT_TRUE(plain[i].aux.empty());
    // aux is exactly the prefill's capture of the sequence.
    KvCache kv = model_->make_cache(64);
    ForwardResult out;
    prefill(*model_, kv, with_aux[i].tokens, 64, out, pool_, layers);
    ASSERT_EQ(with_aux[i].aux.size(), with_aux[i].tokens.size() * width);
    EXPECT_TRUE(same_capture_bits(with_aux[i].aux, out.captured));
  }
  const std::vector<std::vector<int32_t>> docs = {{1, 3, 4, 5, 6, 7, 8, 9, 10}};
  const auto pieces = train::from_documents(*model_, docs, 4, 1, pool_);
  const auto aux_pieces = train::from_documents(*model_, docs, 4, 1, pool_, nullptr, layers);
  ASSERT_EQ(pieces.size(), aux_pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_TRUE(same_capture_bits(pieces[i].features, aux_pieces[i].features));
    EXPECT_TRUE(pieces[i].aux.empty());
    EXPECT_EQ(aux_pieces[i].aux.size(), aux_pieces[i].tokens.size() * width);
  }
  const std::vector<int32_t> bad = {4};
  EXPECT_EQ(test::error_of([&] { train::record_features(*model_, prompts[0], pool_, bad); }),
            "forward: capture layer 4 outside the model's 4 layers");
}

}  // namespace
}  // namespace eagle2
