// EAGLE-3 training (train/ttt_attention.h, train/eagle3_layer.h, train/eagle3_unrolled.h):
// every backward against central finite differences of a double-precision reference
// (support/eagle3_reference.h), the training-time-test mask entry by entry, and the structure of
// the unrolled forward (a row sees only its past; one step is a plain causal layer; uncounted
// rows do not matter; thread-count invariance).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "support/eagle3_reference.h"
#include "support/grad_check.h"
#include "train/attention.h"
#include "train/attention_blocks.h"
#include "train/eagle3_layer.h"
#include "train/eagle3_unrolled.h"
#include "train/ttt_attention.h"

namespace eagle2::train {
namespace {

using namespace test::grad_check;

const AttentionShape kShape{2, 5, 2, 1, 4};  // B, T, H, KV, hd
constexpr int64_t kN = 10, kQw = 8, kKw = 4;
// Gradient tolerance relative to the gradient's scale: the float backward against central
// differences of the double reference agrees to about 1e-5 on these cases (measured); 1e-4
// leaves a margin for other kernel paths and compilers.
constexpr double kRtol = 1e-4;

// An overload of grad_check's to_d for lists; grad_check's stays in the overload set beside it (a
// test file compiled after this one in the same unity unit calls it by its plain name).
using test::grad_check::to_d;
std::vector<DVec> to_d(const std::vector<Vec>& v) {
  std::vector<DVec> d;
  for (const Vec& x : v) d.push_back(test::grad_check::to_d(x));
  return d;
}

// q and the keys/values of steps 0..s, spread enough for peaked attention rows.
struct TttInputs {
  Vec q;
  std::vector<Vec> k, v;
  TttInputs(int64_t s, std::mt19937& g) : q(rnd(kN * kQw, g, -1.5f, 1.5f)) {
    random_keys_values(k, v, s, kN * kKw, g);
  }
  Vec forward(Vec& probs, ThreadPool& pool) const {
    const int64_t s = static_cast<int64_t>(k.size()) - 1;
    Vec out(kN * kQw);
    probs.assign(static_cast<size_t>(kShape.batch * kShape.n_heads * 5 * (5 + s)), -1.0f);
    ttt_attention_forward(out.data(), probs.data(), q.data(), ptrs(k), ptrs(v), kShape, pool);
    return out;
  }
};

// ---- training-time-test attention ---------------------------------------------------------

TEST(TttAttention, GradientsMatchFiniteDifferences) {
  ThreadPool pool(2);
  for (int64_t s : {0, 1, 2}) {
    std::mt19937 g(static_cast<uint32_t>(10 + s));
    const TttInputs in(s, g);
    const Vec R = rnd(kN * kQw, g);
    Vec probs;
    const Vec out = in.forward(probs, pool);
    DVec qd = test::grad_check::to_d(in.q);
    std::vector<DVec> kd = to_d(in.k), vd = to_d(in.v);
    auto L = [&] { return dot(ttt_attention_ref(qd, kd, vd, kShape), R); };
    expect_close(out, ttt_attention_ref(qd, kd, vd, kShape), 1e-5, "ttt attention forward");

    // Non-zero gradient buffers: the backward must add to them.
    Vec dq(kN * kQw, 0.5f);
    std::vector<Vec> dk(static_cast<size_t>(s + 1), Vec(kN * kKw, 0.25f)), dv = dk;
    ttt_attention_backward(dq.data(), mut_ptrs(dk), mut_ptrs(dv), R.data(), in.q.data(), ptrs(in.k),
                           ptrs(in.v), probs.data(), kShape, pool);
    for (float& e : dq) e -= 0.5f;
    for (Vec& d : dk)
      for (float& e : d) e -= 0.25f;
    for (Vec& d : dv)
      for (float& e : d) e -= 0.25f;
    const std::string step = " (step " + std::to_string(s) + ")";
    expect_grad(dq, numeric_grad(qd, L), ("dq" + step).c_str(), kRtol);
    for (int64_t u = 0; u <= s; ++u) {
      const std::string which = " of step " + std::to_string(u) + step;
      expect_grad(dk[u], numeric_grad(kd[u], L), ("dk" + which).c_str(), kRtol);
      expect_grad(dv[u], numeric_grad(vd[u], L), ("dv" + which).c_str(), kRtol);
    }
  }
}

// Longer than one score block of the kernel path (train/attention_blocks.h): rows past the first
// block, whose keys span two blocks, against the double reference and its finite differences.
TEST(TttAttention, RowsPastTheFirstScoreBlockMatchTheReference) {
  ThreadPool pool(2);
  const AttentionShape shape{1, kAttentionBlock + 6, 2, 1, 4};
  const int64_t n = shape.seq_len, qw = 8, kw = 4, s = 1;
  std::mt19937 g(15);
  const Vec q = rnd(n * qw, g, -1.5f, 1.5f), R = rnd(n * qw, g);
  std::vector<Vec> k, v;
  random_keys_values(k, v, s, n * kw, g);
  Vec out(n * qw), probs(static_cast<size_t>(shape.n_heads * n * (n + s)));
  ttt_attention_forward(out.data(), probs.data(), q.data(), ptrs(k), ptrs(v), shape, pool);
  DVec qd = test::grad_check::to_d(q);
  std::vector<DVec> kd = to_d(k), vd = to_d(v);
  auto L = [&] { return dot(ttt_attention_ref(qd, kd, vd, shape), R); };
  expect_close(out, ttt_attention_ref(qd, kd, vd, shape), 1e-5, "ttt attention forward, T = 70");
  Vec dq(n * qw, 0.0f);
  std::vector<Vec> dk(static_cast<size_t>(s + 1), Vec(n * kw, 0.0f)), dv = dk;
  ttt_attention_backward(dq.data(), mut_ptrs(dk), mut_ptrs(dv), R.data(), q.data(), ptrs(k),
                         ptrs(v), probs.data(), shape, pool);
  expect_grad(dq, numeric_grad(qd, L), "dq, T = 70", kRtol);
  for (int64_t u = 0; u <= s; ++u) {
    expect_grad(dk[u], numeric_grad(kd[u], L), ("dk of step " + std::to_string(u)).c_str(), kRtol);
    expect_grad(dv[u], numeric_grad(vd[u], L), ("dv of step " + std::to_string(u)).c_str(), kRtol);
  }
}

// Query (s, t) reads the step-0 keys/values of rows t' <= t and those of steps 1..s at row t,
// nothing else: a change anywhere else leaves its output bitwise unchanged.
TEST(TttAttention, EachQuerySeesExactlyItsKeys) {
  ThreadPool pool(2);
  const int64_t s = 2, T = kShape.seq_len;
  std::mt19937 g(20);
  const TttInputs base(s, g);
  Vec probs;
  const Vec out = base.forward(probs, pool);
  for (bool value : {false, true})
    for (int64_t u = 0; u <= s; ++u)
      for (int64_t row = 0; row < kN; ++row) {
        TttInputs in = base;
        Vec& tensor = value ? in.v[u] : in.k[u];
        for (int64_t i = 0; i < kKw; ++i) tensor[row * kKw + i] += 0.5f;
        const Vec out2 = in.forward(probs, pool);
        for (int64_t q_row = 0; q_row < kN; ++q_row) {
          const bool same_window = q_row / T == row / T;
          const int64_t t = q_row % T, key_t = row % T;
          const bool sees = same_window && (u == 0 ? key_t <= t : key_t == t);
          const bool same = std::memcmp(out.data() + q_row * kQw, out2.data() + q_row * kQw,
                                        kQw * sizeof(float)) == 0;
          EXPECT_EQ(same, !sees) << (value ? "v" : "k") << " of step " << u << " row " << row
                                 << ", query row " << q_row;
        }
      }

  // Probability rows: exactly t + 1 + s positive entries (t + 1 causal, s diagonal), summing to 1.
  const int64_t W = T + s;
  for (int64_t r = 0; r < kShape.batch * kShape.n_heads * T; ++r) {
    const int64_t t = r % T;
    const float* p = probs.data() + r * W;
    double sum = 0;
    int64_t positive = 0;
    for (int64_t j = 0; j < W; ++j) {
      const bool live = j <= t || j >= T;
      if (live)
        EXPECT_GT(p[j], 0.0f) << "row " << r << " entry " << j;
      else
        EXPECT_EQ(p[j], 0.0f) << "row " << r << " entry " << j;
      positive += p[j] > 0.0f;
      sum += p[j];
    }
    EXPECT_EQ(positive, t + 1 + s);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(TttAttention, FirstStepIsPlainCausalAttention) {
  ThreadPool pool(2);
  std::mt19937 g(30);
  const TttInputs in(0, g);
  Vec probs;
  const Vec out = in.forward(probs, pool);
  Vec out_causal(out.size()), probs_causal(probs.size());
  attention_forward(out_causal.data(), probs_causal.data(), in.q.data(), in.k[0].data(),
                    in.v[0].data(), kShape, pool);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], out_causal[i], 1e-6) << i;
  for (size_t i = 0; i < probs.size(); ++i) EXPECT_NEAR(probs[i], probs_causal[i], 1e-6) << i;
}

// ---- the layer alone ----------------------------------------------------------------------

// Step s of the layer on its own inputs x, e (earlier steps' keys/values fixed): gradients w.r.t.
// every layer parameter, both inputs, and the earlier steps' keys and values. A frozen embedding
// (de null, as in training) takes the backward's other path for the embedding half.
void check_layer_step(int64_t s, bool frozen_embedding = false) {
  ThreadPool pool(2);
  Eagle3Case cs;
  const Eagle3Config& c = cs.cfg;
  const int64_t N = cs.rows(), C = c.hidden;
  std::mt19937 g(static_cast<uint32_t>(40 + s));
  std::vector<Eagle3StepActs> acts(static_cast<size_t>(s + 1));
  std::vector<Eagle3StepActs*> ptr;
  Vec x, e;
  std::vector<int32_t> pos;
  for (int64_t u = 0; u <= s; ++u) {
    acts[u].resize(c, cs.B, cs.T, u);
    ptr.push_back(&acts[u]);
    x = rnd(N * C, g, -2.0f, 2.0f);
    e = rnd(N * C, g);
    pos = cs.positions;
    for (int32_t& p : pos) p += static_cast<int32_t>(u);
    eagle3_layer_forward(c, *cs.w, x.data(), e.data(), pos.data(), ptr, pool);
  }
  const Vec R = rnd(N * C, g);
  std::vector<Parameter*> params;
  cs.w->collect(params);
  zero_grads(params);
  Vec dh = R, de(N * C, 0.0f);
  Eagle3Scratch scratch;
  eagle3_layer_backward(c, *cs.w, dh.data(), frozen_embedding ? nullptr : de.data(), ptr, scratch,
                        pool);

  Eagle3RefParams P(*cs.w);
  DVec xd = test::grad_check::to_d(x), ed = test::grad_check::to_d(e);
  std::vector<DVec> ek, ev;
  for (int64_t u = 0; u < s; ++u) {
    ek.push_back(test::grad_check::to_d(acts[u].k));
    ev.push_back(test::grad_check::to_d(acts[u].v));
  }
  auto L = [&] { return dot(eagle3_layer_ref(c, P, xd, ed, pos, ek, ev, cs.B, cs.T).h, R); };
  expect_close(acts[s].h, eagle3_layer_ref(c, P, xd, ed, pos, ek, ev, cs.B, cs.T).h, 1e-5,
               "layer forward");
  const std::string step = " (step " + std::to_string(s) + ")";
  const auto members = eagle3_ref_members();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = members[i].first;
    if (name == "fc" || name == "norm" || name == "lm_head") {  // not the layer's
      for (float v : params[i]->grad) ASSERT_EQ(v, 0.0f) << name;
      continue;
    }
    expect_grad(params[i]->grad, numeric_grad(P.*members[i].second, L), (name + step).c_str(),
                kRtol);
  }
  expect_grad(dh, numeric_grad(xd, L), ("dx" + step).c_str(), kRtol);
  if (!frozen_embedding) expect_grad(de, numeric_grad(ed, L), ("de" + step).c_str(), kRtol);
  for (int64_t u = 0; u < s; ++u) {
    expect_grad(acts[u].dk, numeric_grad(ek[u], L), ("dk of an earlier step" + step).c_str(),
                kRtol);
    expect_grad(acts[u].dv, numeric_grad(ev[u], L), ("dv of an earlier step" + step).c_str(),
                kRtol);
  }
}

TEST(Eagle3Layer, FirstStepGradientsMatchFiniteDifferences) {
  check_layer_step(0);
}

TEST(Eagle3Layer, LaterStepGradientsMatchFiniteDifferences) {
  check_layer_step(2);
}

TEST(Eagle3Layer, FrozenEmbeddingGradientsMatchFiniteDifferences) {
  check_layer_step(0, true);
  check_layer_step(2, true);
}

TEST(Eagle3Layer, ParameterNamesShapesAndInit) {
  Eagle3Case cs;
  Eagle3Weights w(cs.cfg);
  TrainRng rng(3);
  w.init(rng);
  std::vector<Parameter*> params;
  w.collect(params);
  ASSERT_EQ(params.size(), 13u);
  EXPECT_EQ(params[0]->name, "fc.weight");
  EXPECT_EQ(params[0]->shape, (std::vector<int64_t>{8, 24}));
  EXPECT_EQ(params[1]->name, "midlayer.input_layernorm.weight");
  EXPECT_EQ(params[2]->name, "midlayer.hidden_norm.weight");
  EXPECT_EQ(params[3]->shape, (std::vector<int64_t>{8, 16}));  // q_proj reads 2C
  EXPECT_EQ(params[4]->shape, (std::vector<int64_t>{4, 16}));  // k_proj: KV * hd rows
  EXPECT_EQ(params[12]->name, "lm_head.weight");
  EXPECT_EQ(params[12]->shape, (std::vector<int64_t>{12, 8}));
  for (Parameter* p : params) {
    if (p->shape.size() == 1) {
      EXPECT_FALSE(p->decay) << p->name;
      for (float v : p->value) EXPECT_EQ(v, 1.0f) << p->name;
    } else {
      const float bound = 1.0f / std::sqrt(static_cast<float>(p->shape[1]));
      float mx = 0;
      for (float v : p->value) mx = std::max(mx, std::fabs(v));
      EXPECT_LE(mx, bound) << p->name;
      EXPECT_GT(mx, 0.5f * bound) << p->name;
    }
  }
  Eagle3Config bad = cs.cfg;
  bad.n_kv_heads = 3;
  EXPECT_THROW(Eagle3Weights{bad}, Error);
}

// ---- the unrolled loss --------------------------------------------------------------------

void check_unrolled_gradients(float state_weight) {
  ThreadPool pool(2);
  Eagle3Case cs;
  std::vector<Parameter*> params;
  cs.w->collect(params);
  zero_grads(params);
  Eagle3Unrolled state;
  const Eagle3Window win = cs.window(state_weight);
  const Eagle3Loss loss =
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), win, state, pool);
  eagle3_unrolled_backward(cs.cfg, *cs.w, win, state, pool);

  // Window 0 counts every row; window 1 loses offset 3 and the two offsets past its end.
  EXPECT_EQ(loss.counted, (std::vector<int64_t>{9, 8, 7}));
  ASSERT_EQ(loss.step_loss.size(), 3u);
  double total = 0;
  ASSERT_EQ(loss.state_loss.size(), 3u);
  for (int s = 0; s < 3; ++s) {
    total += std::pow(0.8, s) * (loss.step_loss[s] + state_weight * loss.state_loss[s]);
    EXPECT_EQ(loss.state_loss[s] > 0, state_weight > 0) << s;
  }
  EXPECT_NEAR(loss.total, total, 1e-6 * total);

  Eagle3RefParams P(*cs.w);
  const DVec embed = test::grad_check::to_d(cs.embed),
             features = test::grad_check::to_d(cs.features);
  const Eagle3RefResult ref = eagle3_unrolled_ref(cs.cfg, P, embed, features, win);
  EXPECT_NEAR(loss.total, ref.loss, 1e-5 * ref.loss);
  const Vec hidden = eagle3_unrolled_hidden(cs.cfg, *cs.w, cs.embed_matrix(), win, pool);
  const size_t NC = static_cast<size_t>(cs.rows() * cs.cfg.hidden);
  for (int64_t s = 0; s < cs.S; ++s) {
    const Vec h_s(hidden.begin() + s * NC, hidden.begin() + (s + 1) * NC);
    EXPECT_TRUE(same_bits(h_s, state.steps[s].h)) << "step " << s;
    expect_close(h_s, ref.h[s], 1e-5, ("h of step " + std::to_string(s)).c_str());
  }

  auto L = [&] { return eagle3_unrolled_ref(cs.cfg, P, embed, features, win).loss; };
  const auto members = eagle3_ref_members();
  for (size_t i = 0; i < params.size(); ++i)
    expect_grad(params[i]->grad, numeric_grad(P.*members[i].second, L),
                ("unrolled d" + members[i].first).c_str(), kRtol);
}

TEST(Eagle3Unrolled, LossGradientMatchesFiniteDifferences) {
  check_unrolled_gradients(0.0f);
}

// The optional state term (EAGLE-1/2's feature regression) on top of the token loss: its value
// and its gradient through norm, the layer and fc, against the double reference.
TEST(Eagle3Unrolled, StateTermGradientMatchesFiniteDifferences) {
  check_unrolled_gradients(0.7f);
}

// h_s at row t depends on the features of rows <= t and the tokens at offsets <= t + 1 + s of its
// own window, and on nothing else (bitwise).
TEST(Eagle3Unrolled, RowsSeeOnlyTheirPast) {
  ThreadPool pool(2);
  Eagle3Case cs;
  const int64_t T = cs.T, NC = cs.rows() * cs.cfg.hidden, C = cs.cfg.hidden;
  const Vec base = eagle3_unrolled_hidden(cs.cfg, *cs.w, cs.embed_matrix(), cs.window(), pool);
  auto compare = [&](const Vec& got, const auto& unchanged, const char* what) {
    for (int64_t s = 0; s < cs.S; ++s)
      for (int64_t row = 0; row < cs.rows(); ++row) {
        const bool same = std::memcmp(got.data() + s * NC + row * C, base.data() + s * NC + row * C,
                                      C * sizeof(float)) == 0;
        EXPECT_EQ(same, unchanged(s, row / T, row % T)) << what << ": step " << s << " row " << row;
      }
  };
  Eagle3Case f(cs.S);
  for (int64_t i = 0; i < cs.cfg.feature_width; ++i)
    f.features[2 * cs.cfg.feature_width + i] += 0.3f;
  compare(
      eagle3_unrolled_hidden(f.cfg, *f.w, f.embed_matrix(), f.window(), pool),
      [](int64_t, int64_t b, int64_t t) { return b == 1 || t < 2; }, "features of row 2");
  Eagle3Case k(cs.S);
  k.tokens[3] = (k.tokens[3] + 1) % static_cast<int32_t>(k.V);
  compare(
      eagle3_unrolled_hidden(k.cfg, *k.w, k.embed_matrix(), k.window(), pool),
      [](int64_t s, int64_t b, int64_t t) { return b == 1 || t + 1 + s < 3; }, "token at offset 3");
}

// One step is a plain causal EAGLE-3 layer (no diagonal entries): the same bits as step 0 of a
// longer unroll, and the double reference built on the ordinary causal attention.
TEST(Eagle3Unrolled, OneStepIsAPlainCausalLayer) {
  ThreadPool pool(2);
  Eagle3Case cs;
  Eagle3Unrolled state;
  const Eagle3Loss three =
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.window(), state, pool);
  // The same data laid out for S = 1: offsets 0..T of each window.
  const int64_t span1 = cs.T + 1, V = cs.cfg.draft_vocab;
  std::vector<int32_t> tokens;
  Vec teacher;
  std::vector<uint8_t> counted;
  for (int64_t b = 0; b < cs.B; ++b)
    for (int64_t p = 0; p < span1; ++p) {
      const int64_t off = b * (cs.T + cs.S) + p;
      tokens.push_back(cs.tokens[off]);
      counted.push_back(cs.counted[off]);
      teacher.insert(teacher.end(), cs.teacher.begin() + off * V,
                     cs.teacher.begin() + (off + 1) * V);
    }
  const Eagle3Window one{
      cs.B,           cs.T,          1, cs.features.data(), cs.positions.data(), tokens.data(),
      teacher.data(), counted.data()};
  Eagle3Unrolled state1;
  const Eagle3Loss loss1 =
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), one, state1, pool);
  EXPECT_EQ(loss1.step_loss[0], three.step_loss[0]);
  EXPECT_EQ(loss1.total, three.step_loss[0]);
  EXPECT_TRUE(same_bits(state1.steps[0].h, state.steps[0].h));
  const Eagle3RefResult ref =
      eagle3_unrolled_ref(cs.cfg, Eagle3RefParams(*cs.w), test::grad_check::to_d(cs.embed),
                          test::grad_check::to_d(cs.features), one);
  expect_close(state1.steps[0].h, ref.h[0], 1e-5, "one step vs the causal reference layer");
}

// A row that does not count contributes nothing: its teacher can be anything.
TEST(Eagle3Unrolled, UncountedRowsDoNotMatter) {
  ThreadPool pool(2);
  auto run = [&](Eagle3Case& cs, std::vector<float>& grads) {
    std::vector<Parameter*> params;
    cs.w->collect(params);
    zero_grads(params);
    Eagle3Unrolled state;
    const double loss =
        eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.window(), state, pool).total;
    eagle3_unrolled_backward(cs.cfg, *cs.w, cs.window(), state, pool);
    for (Parameter* p : params) grads.insert(grads.end(), p->grad.begin(), p->grad.end());
    return loss;
  };
  Eagle3Case a, b, c;
  const int64_t V = a.cfg.draft_vocab, off = a.T + a.S + 3;  // window 1, offset 3: uncounted
  ASSERT_EQ(b.counted[off], 0);
  for (int64_t i = 0; i < V; ++i) b.teacher[off * V + i] = i == 0 ? 1.0f : 0.0f;
  for (int64_t i = 0; i < V; ++i) c.teacher[2 * V + i] = i == 0 ? 1.0f : 0.0f;  // window 0: counted
  std::vector<float> ga, gb, gc;
  const double la = run(a, ga), lb = run(b, gb), lc = run(c, gc);
  EXPECT_EQ(la, lb);
  EXPECT_EQ(ga, gb);
  EXPECT_NE(la, lc);
}

TEST(Eagle3Unrolled, SameBitsForAnyThreadCount) {
  std::vector<float> grads[2];
  double loss[2];
  for (int n : {1, 2}) {
    ThreadPool pool(n);
    Eagle3Case cs;
    std::vector<Parameter*> params;
    cs.w->collect(params);
    zero_grads(params);
    Eagle3Unrolled state;
    loss[n - 1] =
        eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.window(), state, pool).total;
    eagle3_unrolled_backward(cs.cfg, *cs.w, cs.window(), state, pool);
    for (Parameter* p : params)
      grads[n - 1].insert(grads[n - 1].end(), p->grad.begin(), p->grad.end());
  }
  EXPECT_EQ(loss[0], loss[1]);
  EXPECT_EQ(grads[0], grads[1]);
}

TEST(Eagle3Unrolled, RejectsBadWindows) {
  ThreadPool pool(1);
  Eagle3Case cs;
  Eagle3Unrolled state;
  Eagle3Window win = cs.window();
  win.steps = 0;
  EXPECT_THROW(eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), win, state, pool), Error);
  win = cs.window();
  win.teacher = nullptr;
  EXPECT_THROW(eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), win, state, pool), Error);
  win = cs.window(0.5f);
  win.states = nullptr;  // a state weight without states
  EXPECT_THROW(eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), win, state, pool), Error);
  // A backward with a state weight its forward did not have.
  eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.window(), state, pool);
  EXPECT_THROW(eagle3_unrolled_backward(cs.cfg, *cs.w, cs.window(0.5f), state, pool), Error);
  cs.tokens[1] = static_cast<int32_t>(cs.V);  // outside the embedding
  EXPECT_THROW(eagle3_unrolled_hidden(cs.cfg, *cs.w, cs.embed_matrix(), cs.window(), pool), Error);
  const Matrix narrow{DType::F32, cs.V, 4, cs.embed.data()};
  EXPECT_THROW(eagle3_unrolled_hidden(cs.cfg, *cs.w, narrow, cs.window(), pool), Error);
}

}  // namespace
}  // namespace eagle2::train
