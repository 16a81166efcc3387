// Qwen2 (q/k/v biases), Qwen3 (per-head RMSNorm of q and k before RoPE, head_dim independent of
// hidden/heads) and LLaMA-3 (rope_scaling "llama3"): the engine's logits at every position against
// a double-precision forward written here from the Hugging Face model definitions, on random
// models with the real loader. And the configs: what each architecture implies, what is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "model/llama_model.h"
#include "model/random_model.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using Vec = std::vector<double>;

Vec weights(const TensorStore& s, const std::string& name) {
  const TensorView& t = s.get(name);
  std::vector<float> f(static_cast<size_t>(t.numel()));
  convert_to_f32(t.dtype, t.data, f.data(), f.size());
  return Vec(f.begin(), f.end());
}

// y[r] = sum_c W[r, c] x[c] for W [rows, cols].
Vec matvec(const Vec& W, const Vec& x, size_t rows) {
  const size_t cols = x.size();
  Vec y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) y[r] += W[r * cols + c] * x[c];
  return y;
}

Vec rmsnorm(const Vec& x, const Vec& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = w[i] * x[i] * scale;
  return y;
}

// Hugging Face's inverse frequencies, in double, including LLaMA-3's rope_scaling.
Vec inv_freq(const LlamaConfig& c) {
  Vec f(static_cast<size_t>(c.head_dim / 2));
  for (size_t i = 0; i < f.size(); ++i)
    f[i] = 1.0 / std::pow(static_cast<double>(c.rope_theta),
                          2.0 * static_cast<double>(i) / static_cast<double>(c.head_dim));
  if (c.rope_scaling == RopeScaling::Llama3) {
    const double old_len = static_cast<double>(c.rope_original_max_position);
    const double low_wavelen = old_len / c.rope_low_freq_factor,
                 high_wavelen = old_len / c.rope_high_freq_factor;
    for (double& v : f) {
      const double wavelen = 2 * std::numbers::pi / v;
      if (wavelen > low_wavelen) {
        v /= c.rope_factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - c.rope_low_freq_factor) /
                              (c.rope_high_freq_factor - c.rope_low_freq_factor);
        v = (1 - smooth) * v / c.rope_factor + smooth * v;
      }
    }
  }
  return f;
}

// Logits [T, V] of the causal forward over `ids` at positions 0..T-1.
std::vector<Vec> reference_logits(const std::string& dir, const LlamaConfig& c,
                                  const std::vector<int32_t>& ids) {
  const TensorStore s = TensorStore::open_dir(dir);
  const size_t T = ids.size(), d = static_cast<size_t>(c.hidden_size),
               hd = static_cast<size_t>(c.head_dim);
  const size_t H = static_cast<size_t>(c.num_heads), KV = static_cast<size_t>(c.num_kv_heads);
  const size_t I = static_cast<size_t>(c.intermediate_size), V = static_cast<size_t>(c.vocab_size),
               half = hd / 2;
  const double eps = c.rms_norm_eps;
  const Vec emb = weights(s, "model.embed_tokens.weight");
  std::vector<Vec> x(T);
  for (size_t t = 0; t < T; ++t)
    x[t] = Vec(emb.begin() + ids[t] * d, emb.begin() + (ids[t] + 1) * d);
  const Vec freq = inv_freq(c);
  auto rope = [&](double* v, size_t pos) {
    for (size_t i = 0; i < half; ++i) {
      const double a = v[i], b = v[i + half], ang = static_cast<double>(pos) * freq[i];
      v[i] = a * std::cos(ang) - b * std::sin(ang);
      v[i + half] = b * std::cos(ang) + a * std::sin(ang);
    }
  };
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const Vec wq = weights(s, p + "self_attn.q_proj.weight"),
              wk = weights(s, p + "self_attn.k_proj.weight");
    const Vec wv = weights(s, p + "self_attn.v_proj.weight"),
              wo = weights(s, p + "self_attn.o_proj.weight");
    std::vector<Vec> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      const Vec h = rmsnorm(x[t], weights(s, p + "input_layernorm.weight"), eps);
      q[t] = matvec(wq, h, H * hd);
      k[t] = matvec(wk, h, KV * hd);
      v[t] = matvec(wv, h, KV * hd);
      if (c.qkv_bias) {
        const Vec bq = weights(s, p + "self_attn.q_proj.bias"),
                  bk = weights(s, p + "self_attn.k_proj.bias");
        const Vec bv = weights(s, p + "self_attn.v_proj.bias");
        for (size_t i = 0; i < q[t].size(); ++i) q[t][i] += bq[i];
        for (size_t i = 0; i < k[t].size(); ++i) k[t][i] += bk[i], v[t][i] += bv[i];
      }
      if (c.qk_norm) {
        const Vec qn = weights(s, p + "self_attn.q_norm.weight"),
                  kn = weights(s, p + "self_attn.k_norm.weight");
        for (size_t h2 = 0; h2 < H; ++h2) {
          const Vec n = rmsnorm(Vec(q[t].begin() + h2 * hd, q[t].begin() + (h2 + 1) * hd), qn, eps);
          std::copy(n.begin(), n.end(), q[t].begin() + h2 * hd);
        }
        for (size_t h2 = 0; h2 < KV; ++h2) {
          const Vec n = rmsnorm(Vec(k[t].begin() + h2 * hd, k[t].begin() + (h2 + 1) * hd), kn, eps);
          std::copy(n.begin(), n.end(), k[t].begin() + h2 * hd);
        }
      }
      for (size_t h2 = 0; h2 < H; ++h2) rope(&q[t][h2 * hd], t);
      for (size_t h2 = 0; h2 < KV; ++h2) rope(&k[t][h2 * hd], t);
    }
    for (size_t t = 0; t < T; ++t) {
      Vec attn(H * hd, 0.0);
      for (size_t h2 = 0; h2 < H; ++h2) {
        const size_t g = h2 / (H / KV);
        Vec sc(t + 1);
        double mx = -1e300;
        for (size_t u = 0; u <= t; ++u) {
          double dot = 0;
          for (size_t i = 0; i < hd; ++i) dot += q[t][h2 * hd + i] * k[u][g * hd + i];
          sc[u] = dot / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, sc[u]);
        }
        double z = 0;
        for (double& e : sc) z += (e = std::exp(e - mx));
        for (size_t u = 0; u <= t; ++u)
          for (size_t i = 0; i < hd; ++i) attn[h2 * hd + i] += sc[u] / z * v[u][g * hd + i];
      }
      const Vec o = matvec(wo, attn, d);
      for (size_t i = 0; i < d; ++i) x[t][i] += o[i];
      const Vec h = rmsnorm(x[t], weights(s, p + "post_attention_layernorm.weight"), eps);
      const Vec g = matvec(weights(s, p + "mlp.gate_proj.weight"), h, I);
      Vec u = matvec(weights(s, p + "mlp.up_proj.weight"), h, I);
      for (size_t i = 0; i < I; ++i) u[i] *= g[i] / (1 + std::exp(-g[i]));
      const Vec down = matvec(weights(s, p + "mlp.down_proj.weight"), u, d);
      for (size_t i = 0; i < d; ++i) x[t][i] += down[i];
    }
  }
  const Vec head = c.tie_word_embeddings ? emb : weights(s, "lm_head.weight");
  std::vector<Vec> out;
  for (size_t t = 0; t < T; ++t)
    out.push_back(matvec(head, rmsnorm(x[t], weights(s, "model.norm.weight"), eps), V));
  return out;
}

void expect_matches_reference(const std::string& name, const LlamaConfig& cfg) {
  const std::string dir = test::temp_dir("arch-" + name);
  write_random_model(dir, cfg, DType::F32, 11, 0.2f);
  auto m = LlamaModel::load(dir);
  const LlamaConfig& c = m->config();
  const std::vector<int32_t> ids = {1, 17, 42, 5, 88, 3, 64, 29, 11, 70};
  std::vector<int32_t> rows(ids.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  ThreadPool pool(2);
  KvCache kv = m->make_cache(32);
  ForwardResult r;
  m->forward(Batch::causal(ids, 0), kv, rows, r, pool);
  const std::vector<Vec> ref = reference_logits(dir, c, ids);
  const size_t V = static_cast<size_t>(c.vocab_size);
  for (size_t t = 0; t < ids.size(); ++t) {
    double scale = 0;
    for (double v : ref[t]) scale = std::max(scale, std::fabs(v));
    for (size_t j = 0; j < V; ++j)
      ASSERT_NEAR(r.logits[t * V + j], ref[t][j], 2e-4 * scale + 1e-5)
          << name << " position " << t << " token " << j;
  }
}

LlamaConfig with_arch(const std::string& arch) {
  LlamaConfig c = test::tiny_config();
  c.architecture = arch;
  return c;
}

TEST(Architectures, Qwen2BiasesMatchTheReference) {
  LlamaConfig c = with_arch("Qwen2ForCausalLM");
  c.rope_theta = 1000000.0f;
  c.tie_word_embeddings = true;
  expect_matches_reference("qwen2", c);
}

TEST(Architectures, Qwen3QkNormMatchesTheReference) {
  LlamaConfig c = with_arch("Qwen3ForCausalLM");
  c.head_dim = 16;  // Qwen3 sets head_dim apart from hidden / heads (here 8 heads x 16 > 64)
  expect_matches_reference("qwen3", c);
}

TEST(Architectures, Llama3RopeScalingMatchesTheReference) {
  LlamaConfig c = with_arch("LlamaForCausalLM");
  c.rope_theta = 500000.0f;
  c.rope_scaling = RopeScaling::Llama3;
  c.rope_factor = 32.0f;
  c.rope_low_freq_factor = 1.0f;
  c.rope_high_freq_factor = 4.0f;
  c.rope_original_max_position = 64;  // small, so the tiny head_dim spans all three bands
  c.tie_word_embeddings = true;
  expect_matches_reference("llama3", c);
}

TEST(Architectures, ConfigsSayWhatTheyImply) {
  auto parse = [](const std::string& json) { return LlamaConfig::parse(json, "config.json"); };
  const std::string sizes = R"("hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 1,
      "num_attention_heads": 4, "vocab_size": 32)";
  const LlamaConfig q2 =
      parse(R"({"model_type": "qwen2", "sliding_window": 4096, "use_sliding_window": false, )" +
            sizes + "}");
  EXPECT_EQ(q2.architecture, "Qwen2ForCausalLM");
  EXPECT_TRUE(q2.qkv_bias);
  EXPECT_FALSE(q2.qk_norm);
  EXPECT_FALSE(q2.sliding_window.has_value())
      << "Qwen's sliding_window applies only with use_sliding_window";
  const LlamaConfig q3 =
      parse(R"({"architectures": ["Qwen3ForCausalLM"], "head_dim": 32, )" + sizes + "}");
  EXPECT_TRUE(q3.qk_norm);
  EXPECT_FALSE(q3.qkv_bias);
  EXPECT_EQ(q3.head_dim, 32);
  EXPECT_EQ(LlamaConfig::parse(q3.to_json(), "again").architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(
      test::error_of(
          [&] { parse(R"({"model_type": "qwen2", "use_sliding_window": true, )" + sizes + "}"); }),
      "config.json: use_sliding_window=true (Qwen's per-layer sliding windows) is not supported");
  EXPECT_EQ(
      test::error_of([&] { parse(R"({"model_type": "qwen2_moe", )" + sizes + "}"); }),
      "config.json: unsupported model_type 'qwen2_moe' (supported: llama, mistral, qwen2, qwen3, "
      "mixtral, qwen3_moe)");
}

}  // namespace
}  // namespace eagle2
