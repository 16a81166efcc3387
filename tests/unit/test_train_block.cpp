// The training decoder block (train/decoder_block.h) and the LLaMA training model built from it:
// every gradient against central finite differences, thread-count invariance, and agreement of
// the forward with the inference model LlamaModel for the same weights.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "io/safetensors.h"
#include "model/batch.h"
#include "model/llama_model.h"
#include "model/random_model.h"
#include "support/shared_data.h"
#include "train/decoder_block.h"
#include "train/llama_train_model.h"

namespace eagle2::train {
namespace {

DecoderBlockConfig tiny_block(bool input_norm) {
  DecoderBlockConfig c;
  c.hidden = 8;
  c.intermediate = 12;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 4;
  c.rms_eps = 1e-5f;
  c.inv_freq = {1.0f, 0.1f};
  c.input_norm = input_norm;
  return c;
}

std::vector<float> random_vector(TrainRng& rng, size_t n, float scale) {
  std::vector<float> v(n);
  for (float& x : v) x = scale * normal_sample(rng);
  return v;
}

struct BlockFixture {
  DecoderBlockConfig cfg;
  DecoderBlockWeights w;
  int64_t B = 2, T = 3;
  std::vector<float> x, r;  // input [M, C]; loss weights: L = sum(out * r)
  std::vector<int32_t> positions{0, 1, 2, 5, 9, 17};  // arbitrary per-row positions
  DecoderBlockActivations acts;

  explicit BlockFixture(bool input_norm) : cfg(tiny_block(input_norm)), w(cfg, "layers.0.") {
    TrainRng rng(11);
    w.init(rng, 0.4f, 0.3f);
    // Non-unit norm weights, so that their gradients and their use in forward are exercised.
    for (float& v : w.input_norm.value) v = 1.0f + 0.2f * normal_sample(rng);
    for (float& v : w.post_norm.value) v = 1.0f + 0.2f * normal_sample(rng);
    x = random_vector(rng, static_cast<size_t>(B * T * cfg.hidden), 1.0f);
    r = random_vector(rng, x.size(), 1.0f);
    acts.resize(cfg, B, T);
  }

  double loss(ThreadPool& pool) {
    std::vector<float> out(x.size());
    decoder_block_forward(cfg, w.params(), out.data(), x.data(), positions.data(), acts, pool);
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i) l += static_cast<double>(out[i]) * r[i];
    return l;
  }
};

// Central difference of the loss in one float element (perturbed in place and restored).
double block_numeric_grad(BlockFixture& f, float& elem, ThreadPool& pool) {
  const float h = 1e-2f, saved = elem;
  elem = saved + h;
  const double lp = f.loss(pool);
  elem = saved - h;
  const double lm = f.loss(pool);
  elem = saved;
  return (lp - lm) / (2.0 * static_cast<double>(h));
}

void check_gradients(bool input_norm) {
  ThreadPool pool(2);
  BlockFixture f(input_norm);
  std::vector<Parameter*> params;
  f.w.collect(params);
  zero_grads(params);
  f.loss(pool);
  std::vector<float> dx = f.r;
  DecoderBlockScratch scratch;
  decoder_block_backward(f.cfg, f.w.params(), dx.data(), f.acts, scratch, pool);

  // Checks ~8 elements spread over each tensor; float forward differences at h = 1e-2 are good to
  // about 1e-3 here.
  auto expect_close = [](double analytic, double numeric, const std::string& what) {
    EXPECT_NEAR(analytic, numeric, 2e-3 + 1e-2 * std::fabs(numeric)) << what;
  };
  for (size_t i = 0; i < f.x.size(); i += f.x.size() / 8 + 1)
    expect_close(dx[i], block_numeric_grad(f, f.x[i], pool), "dx[" + std::to_string(i) + "]");
  EXPECT_EQ(input_norm, !f.w.input_norm.value.empty());
  for (Parameter* p : params) {
    const size_t n = p->value.size();
    for (size_t i = 0; i < n; i += n / 8 + 1)
      expect_close(p->grad[i], block_numeric_grad(f, p->value[i], pool),
                   p->name + "[" + std::to_string(i) + "]");
  }
}

TEST(DecoderBlock, GradientsMatchFiniteDifferences) {
  check_gradients(true);
}

TEST(DecoderBlock, GradientsWithoutInputNorm) {
  check_gradients(false);
}

TEST(DecoderBlock, SameBitsForAnyThreadCount) {
  std::vector<float> out[2], dx[2], grads[2];
  for (int n_threads : {1, 2}) {
    ThreadPool pool(n_threads);
    BlockFixture f(true);
    std::vector<Parameter*> params;
    f.w.collect(params);
    zero_grads(params);
    std::vector<float>& o = out[n_threads - 1];
    o.resize(f.x.size());
    decoder_block_forward(f.cfg, f.w.params(), o.data(), f.x.data(), f.positions.data(), f.acts,
                          pool);
    dx[n_threads - 1] = f.r;
    DecoderBlockScratch scratch;
    decoder_block_backward(f.cfg, f.w.params(), dx[n_threads - 1].data(), f.acts, scratch, pool);
    for (Parameter* p : params)
      grads[n_threads - 1].insert(grads[n_threads - 1].end(), p->grad.begin(), p->grad.end());
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(dx[0], dx[1]);
  EXPECT_EQ(grads[0], grads[1]);
}

TEST(DecoderBlock, RejectsMismatchedParameters) {
  ThreadPool pool(1);
  BlockFixture f(false);
  DecoderBlockParams p = f.w.params();
  p.wk = &f.w.wq;  // [H*hd, C] where [KV*hd, C] is expected
  std::vector<float> out(f.x.size());
  EXPECT_THROW(
      decoder_block_forward(f.cfg, p, out.data(), f.x.data(), f.positions.data(), f.acts, pool),
      Error);
}

LlamaConfig small_llama(bool tie) {
  LlamaConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = 32;
  c.intermediate_size = 56;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 8;
  c.vocab_size = 50;
  c.max_position_embeddings = 64;
  c.rms_norm_eps = 1e-5f;
  c.tie_word_embeddings = tie;
  c.eos_token_ids = {2};
  return c;
}

// The training forward reads the weights of a random HF folder and must compute what the
// inference model computes for each sequence (float tolerance: attention sums in another order).
TEST(LlamaTrainModel, ForwardMatchesInferenceModel) {
  for (bool tie : {false, true}) {
    const LlamaConfig cfg = small_llama(tie);
    const std::string dir = test::temp_dir(tie ? "block_vs_infer_tied" : "block_vs_infer");
    write_random_model(dir, cfg, DType::F32, 3, 0.1f);
    ThreadPool pool(2);
    LlamaTrainModel train_model(cfg);
    train_model.load_weights(dir);
    const int64_t B = 2, T = 9;
    std::vector<int32_t> tokens(static_cast<size_t>(B * T));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7 + 3) % 50);
    const std::vector<float> hidden = train_model.hidden_states(tokens.data(), B, T, pool);
    const std::vector<float> logits = train_model.logits(tokens.data(), B, T, pool);

    auto infer = LlamaModel::load(dir);
    std::vector<int32_t> rows(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) rows[t] = static_cast<int32_t>(t);
    for (int64_t b = 0; b < B; ++b) {
      KvCache kv = infer->make_cache(T);
      const std::span<const int32_t> seq(tokens.data() + b * T, static_cast<size_t>(T));
      ForwardResult res;
      infer->forward(Batch::causal(seq, 0), kv, rows, res, pool);
      const int64_t C = cfg.hidden_size, V = cfg.vocab_size;
      for (int64_t i = 0; i < T * C; ++i)
        ASSERT_NEAR(hidden[b * T * C + i], res.hidden[i], 2e-5 + 2e-5 * std::fabs(res.hidden[i]))
            << "tie " << tie << " seq " << b << " element " << i;
      for (int64_t i = 0; i < T * V; ++i)
        ASSERT_NEAR(logits[b * T * V + i], res.logits[i], 1e-4 + 1e-4 * std::fabs(res.logits[i]))
            << "tie " << tie << " seq " << b << " logit " << i;
    }
  }
}

// Exported weights (f32) reload to the same values; bf16 export is what LlamaModel loads too.
TEST(LlamaTrainModel, ExportRoundTrips) {
  const LlamaConfig cfg = small_llama(true);
  LlamaTrainModel a(cfg), b(cfg);
  a.init(5, 0.05f);
  const std::string dir = test::temp_dir("train_model_export");
  a.export_hf(dir, DType::F32);
  b.load_weights(dir);
  for (size_t i = 0; i < a.params().size(); ++i)
    EXPECT_EQ(a.params()[i]->value, b.params()[i]->value) << a.params()[i]->name;
  EXPECT_FALSE(TensorStore::open_dir(dir).has("lm_head.weight"));
  const std::string dir16 = test::temp_dir("train_model_export_bf16");
  a.export_hf(dir16, DType::BF16);
  auto m = LlamaModel::load(dir16);
  EXPECT_EQ(m->weight_dtypes(), std::vector<std::string>{"BF16"});
}

// The model's whole backward (embedding, blocks, final norm, lm_head loss) against finite
// differences of its loss, in a few elements of every parameter.
TEST(LlamaTrainModel, LossGradientMatchesFiniteDifferences) {
  LlamaConfig cfg = small_llama(false);
  cfg.hidden_size = 16;
  cfg.intermediate_size = 24;
  cfg.head_dim = 4;
  cfg.vocab_size = 20;
  ThreadPool pool(2);
  LlamaTrainModel m(cfg);
  m.init(9, 0.3f);
  const int64_t B = 2, T = 5;
  std::vector<int32_t> in(static_cast<size_t>(B * T)), tg(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<int32_t>((i * 3 + 1) % 20);
    tg[i] = static_cast<int32_t>((i * 5 + 2) % 20);
  }
  zero_grads(m.params());
  m.forward_backward(in.data(), tg.data(), B, T, true, pool);
  for (Parameter* p : m.params()) {
    const size_t n = p->value.size();
    for (size_t i = 0; i < n; i += n / 4 + 1) {
      const float saved = p->value[i], h = 1e-2f;
      p->value[i] = saved + h;
      const double lp = m.forward_backward(in.data(), tg.data(), B, T, false, pool);
      p->value[i] = saved - h;
      const double lm = m.forward_backward(in.data(), tg.data(), B, T, false, pool);
      p->value[i] = saved;
      const double numeric = (lp - lm) / (2.0 * h);
      EXPECT_NEAR(p->grad[i], numeric, 3e-4 + 2e-2 * std::fabs(numeric))
          << p->name << "[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace eagle2::train
