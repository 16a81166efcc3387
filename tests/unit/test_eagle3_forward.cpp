// EagleHead's EAGLE-3 forward against a scalar double-precision reference of the draft layer
// written here from the reference's conventions (../shared/golden/EAGLE3.md): x = fc(features)
// on catch-up rows and the parent's output h (fc skipped) later; q/k/v read
// [input_layernorm(embedding) | hidden_norm(x)] (embedding first); the residual is x itself;
// RoPE at the positions given; h is pre-norm; draft log-probs are log_softmax(lm_head(norm(h)))
// over the draft vocabulary, whose index i is target token i + d2t[i].
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "draft/eagle_head.h"
#include "support/eagle3_heads.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using Vec = std::vector<double>;

// The head's weights in double, read back from the files the head was loaded from.
struct RefHead {
  RefHead(test::HeadFiles& f, const LlamaModel& target, const LlamaConfig& head_cfg)
      : target(target), c(head_cfg) {
    for (test::HeadTensor& t : f.tensors) {
      if (t.dtype != DType::F32) continue;
      const size_t n = t.bytes.size() / 4;
      w[t.name] = Vec(t.f32(), t.f32() + n);
    }
    test::HeadTensor& d2t = *f.find("d2t");
    for (int64_t i = 0; i < d2t.shape[0]; ++i)
      draft_ids.push_back(static_cast<int32_t>(i + d2t.i64()[i]));
  }

  // y = W x for W [rows, cols] row-major.
  Vec mv(const std::string& name, const Vec& x) const {
    const Vec& W = w.at(name);
    const size_t cols = x.size(), rows = W.size() / cols;
    Vec y(rows, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = 0; k < cols; ++k) y[r] += W[r * cols + k] * x[k];
    return y;
  }
  Vec rms(const Vec& x, const std::string& weight) const {
    double s = 0;
    for (double v : x) s += v * v;
    const double scale = 1.0 / std::sqrt(s / static_cast<double>(x.size()) + c.rms_norm_eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = w.at(weight)[i] * x[i] * scale;
    return y;
  }
  void rope(double* v, int64_t pos) const {
    const int64_t hd = c.head_dim, half = hd / 2;
    for (int64_t i = 0; i < half; ++i) {
      const double freq = std::pow(static_cast<double>(c.rope_theta), -2.0 * i / hd);
      const double a = pos * freq, x0 = v[i], x1 = v[i + half];
      v[i] = x0 * std::cos(a) - x1 * std::sin(a);
      v[i + half] = x1 * std::cos(a) + x0 * std::sin(a);
    }
  }

  // One head row: its key/value go to `slot`, it attends to the slots in `sees` (its own
  // included). Returns h.
  Vec row(const Vec& in, bool from_features, int32_t token, int64_t pos, int64_t slot,
          const std::vector<int64_t>& sees) {
    const int64_t d = c.hidden_size, hd = c.head_dim, H = c.num_heads, KV = c.num_kv_heads;
    const Vec x = from_features ? mv("fc.weight", in) : in;
    std::vector<float> e(static_cast<size_t>(d));
    target.embed(token, e.data());
    const Vec en = rms(Vec(e.begin(), e.end()), "midlayer.input_layernorm.weight");
    const Vec xn = rms(x, "midlayer.hidden_norm.weight");
    Vec a(en);
    a.insert(a.end(), xn.begin(), xn.end());  // the embedding first
    Vec q = mv("midlayer.self_attn.q_proj.weight", a);
    Vec k = mv("midlayer.self_attn.k_proj.weight", a);
    const Vec v = mv("midlayer.self_attn.v_proj.weight", a);
    for (int64_t h = 0; h < H; ++h) rope(&q[h * hd], pos);
    for (int64_t h = 0; h < KV; ++h) rope(&k[h * hd], pos);
    keys[slot] = k;
    values[slot] = v;
    Vec attn(static_cast<size_t>(H * hd), 0.0);
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / KV);
      std::vector<double> p;
      double mx = -1e300;
      for (int64_t s : sees) {
        double dot = 0;
        for (int64_t i = 0; i < hd; ++i) dot += q[h * hd + i] * keys.at(s)[g * hd + i];
        p.push_back(dot / std::sqrt(static_cast<double>(hd)));
        mx = std::max(mx, p.back());
      }
      double z = 0;
      for (double& x_ : p) z += (x_ = std::exp(x_ - mx));
      for (size_t j = 0; j < sees.size(); ++j)
        for (int64_t i = 0; i < hd; ++i)
          attn[h * hd + i] += p[j] / z * values.at(sees[j])[g * hd + i];
    }
    const Vec o = mv("midlayer.self_attn.o_proj.weight", attn);
    Vec h1(x);  // the residual is x, not its norm
    for (int64_t i = 0; i < d; ++i) h1[i] += o[i];
    const Vec m = rms(h1, "midlayer.post_attention_layernorm.weight");
    const Vec gate = mv("midlayer.mlp.gate_proj.weight", m),
              up = mv("midlayer.mlp.up_proj.weight", m);
    Vec act(gate.size());
    for (size_t i = 0; i < gate.size(); ++i) act[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
    const Vec down = mv("midlayer.mlp.down_proj.weight", act);
    for (int64_t i = 0; i < d; ++i) h1[i] += down[i];
    return h1;
  }

  Vec logprobs(const Vec& h) const {
    Vec l = mv("lm_head.weight", rms(h, "norm.weight"));
    double mx = -1e300, z = 0;
    for (double v : l) mx = std::max(mx, v);
    for (double v : l) z += std::exp(v - mx);
    for (double& v : l) v -= mx + std::log(z);
    return l;
  }

  const LlamaModel& target;
  LlamaConfig c;
  std::map<std::string, Vec> w;
  std::vector<int32_t> draft_ids;
  std::map<int64_t, Vec> keys, values;
};

void expect_close(const float* got, const Vec& want, double tol, const std::string& what) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]) / (1.0 + std::abs(want[i])));
  EXPECT_LT(worst, tol) << what;
}

TEST(Eagle3Forward, MatchesTheScalarReference) {
  LlamaConfig tc = test::tiny_config();
  tc.num_layers = 8;
  const auto target = test::load_random_model("e3-forward", tc);
  // Its own attention shape and MLP width (published heads differ from their targets there).
  test::HeadFiles files = test::random_eagle3_head(
      *target, {.draft_vocab = 40, .intermediate = 48, .num_heads = 4, .num_kv_heads = 2});
  const auto head = EagleHead::load(test::write_head_folder("forward", files), *target);
  ASSERT_EQ(head->kind(), EagleHead::Kind::Eagle3);
  RefHead ref(files, *target, head->config());
  const int64_t d = 64, F = head->feature_width(), n0 = 5;
  ASSERT_EQ(F, 3 * 64);
  ThreadPool pool(2);

  // Catch-up: five pairs of target features and next tokens at positions 0..4, fc applied.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> features(static_cast<size_t>(n0 * F));
  for (float& v : features) v = normal(rng);
  const std::vector<int32_t> tokens = {7, 30, 2, 95, 41};
  KvCache kv = head->make_cache(32);
  std::vector<float> out(static_cast<size_t>(n0 * d));
  head->forward_causal(features.data(), tokens, kv, out.data(), pool);
  std::vector<Vec> ref_out;
  for (int64_t i = 0; i < n0; ++i) {
    std::vector<int64_t> sees;
    for (int64_t j = 0; j <= i; ++j) sees.push_back(j);
    ref_out.push_back(
        ref.row(Vec(&features[i * F], &features[(i + 1) * F]), true, tokens[i], i, i, sees));
    expect_close(&out[i * d], ref_out.back(), 1e-4, "catch-up row " + std::to_string(i));
  }

  // Later steps continue from head outputs (fc skipped). Two siblings from the last catch-up row
  // at position 7 (positions are not slots: slots 5 and 6), then a child of the first at position
  // 8 that sees its parent, as a drafted tree's rows do.
  kv.begin_batch(2);
  std::vector<float> hidden(out.begin() + 4 * d, out.end());
  hidden.insert(hidden.end(), out.begin() + 4 * d, out.end());
  const std::vector<int32_t> sib_tokens = {12, 60}, sib_pos = {7, 7}, sib_slots = {5, 6};
  const std::vector<int32_t> sib_visible = {5, 6};
  const std::vector<int64_t> sib_begin = {0, 1, 2};
  std::vector<float> sib_out(static_cast<size_t>(2 * d));
  head->forward({hidden.data(), sib_tokens, sib_pos, sib_slots, sib_visible, sib_begin}, kv,
                sib_out.data(), pool);
  const std::vector<int64_t> committed = {0, 1, 2, 3, 4};
  auto plus = [&](std::vector<int64_t> a, std::initializer_list<int64_t> b) {
    a.insert(a.end(), b);
    return a;
  };
  const Vec ref_a = ref.row(ref_out[4], false, 12, 7, 5, plus(committed, {5}));
  const Vec ref_b = ref.row(ref_out[4], false, 60, 7, 6, plus(committed, {6}));
  expect_close(&sib_out[0], ref_a, 1e-4, "sibling a");
  expect_close(&sib_out[d], ref_b, 1e-4, "sibling b");

  kv.begin_batch(3);
  const std::vector<int32_t> child_token = {33}, child_pos = {8}, child_slot = {7};
  const std::vector<int32_t> child_visible = {5, 7};
  const std::vector<int64_t> child_begin = {0, 2};
  std::vector<float> child_out(static_cast<size_t>(d));
  head->forward({sib_out.data(), child_token, child_pos, child_slot, child_visible, child_begin},
                kv, child_out.data(), pool);
  const Vec ref_c = ref.row(ref_a, false, 33, 8, 7, plus(committed, {5, 7}));
  expect_close(child_out.data(), ref_c, 1e-4, "child");

  // Draft log-probs over the 40 draft ids, and draft index -> target id through d2t.
  ASSERT_EQ(head->draft_vocab_size(), 40);
  std::vector<float> lp(static_cast<size_t>(2 * 40));
  std::vector<float> rows(out.begin() + 4 * d, out.end());
  rows.insert(rows.end(), child_out.begin(), child_out.end());
  head->draft_logprobs(rows.data(), 2, lp.data(), pool);
  expect_close(&lp[0], ref.logprobs(ref_out[4]), 1e-5, "log-probs of the last catch-up row");
  expect_close(&lp[40], ref.logprobs(ref_c), 1e-5, "log-probs of the child");
  for (int64_t j = 0; j < 40; ++j) EXPECT_EQ(head->draft_token(j), ref.draft_ids[j]) << j;

  // fc_forward is the catch-up rows' first step.
  std::vector<float> x(static_cast<size_t>(d));
  head->fc_forward(&features[2 * F], 1, x.data(), pool);
  expect_close(x.data(), ref.mv("fc.weight", Vec(&features[2 * F], &features[3 * F])), 1e-5, "fc");
}

// The same rows give the same bits however they are batched: one catch-up batch of five equals
// five batches of one (the batch-invariance rule the drafters rely on).
TEST(Eagle3Forward, CatchUpIsBatchInvariant) {
  LlamaConfig tc = test::tiny_config();
  tc.num_layers = 8;
  const auto target = test::load_random_model("e3-forward-inv", tc);
  const auto head = EagleHead::load(
      test::write_head_folder("invariant", test::random_eagle3_head(*target, {.seed = 9})),
      *target);
  ThreadPool pool(2);
  const int64_t d = 64, F = head->feature_width(), n = 5;
  std::vector<float> features(static_cast<size_t>(n * F));
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : features) v = normal(rng);
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5};
  KvCache a = head->make_cache(16), b = head->make_cache(16);
  std::vector<float> all(static_cast<size_t>(n * d)), one(static_cast<size_t>(n * d));
  head->forward_causal(features.data(), tokens, a, all.data(), pool);
  for (int64_t i = 0; i < n; ++i)
    head->forward_causal(&features[i * F], std::span(&tokens[i], 1), b, &one[i * d], pool);
  EXPECT_EQ(std::memcmp(all.data(), one.data(), all.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace eagle2
