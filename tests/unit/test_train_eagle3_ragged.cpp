// Ragged EAGLE-3 training batches (train/ttt_attention.h `lengths`, Eagle3Window::lengths,
// Eagle3Batch::lengths): a window that ends inside its T rows runs only the rows that can count,
// and that changes nothing but the cost. Each sequence of a ragged attention batch gets the bits
// of a batch of that sequence alone; a ragged unrolled loss gets the full window's loss, rows and
// gradients; the trainer's batches run ragged at sequence ends; a ragged window that would drop a
// counted row is refused.
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
#include "support/random_models.h"
#include "train/eagle3_trainer.h"
#include "train/eagle3_unrolled.h"
#include "train/ttt_attention.h"

namespace eagle2::train {
namespace {

using namespace test::grad_check;

// Rows [first, first + n) of a [rows, width] matrix.
Vec rows_of(const Vec& m, int64_t width, int64_t first, int64_t n) {
  return Vec(m.begin() + first * width, m.begin() + (first + n) * width);
}

// Forward and backward of one (possibly ragged) batch: out, probs, dq, dk[u], dv[u].
struct TttRun {
  Vec out, probs, dq;
  std::vector<Vec> dk, dv;
};

TttRun run_ttt(const AttentionShape& shape, std::span<const int64_t> lengths, const Vec& q,
               const std::vector<Vec>& k, const std::vector<Vec>& v, const Vec& dout,
               int64_t probs_size, ThreadPool& pool) {
  TttRun r;
  const int64_t qw = shape.n_heads * shape.head_dim;
  const auto N = static_cast<int64_t>(q.size()) / qw;
  r.out.assign(q.size(), 0.0f);
  r.probs.assign(static_cast<size_t>(probs_size), -1.0f);
  ttt_attention_forward(r.out.data(), r.probs.data(), q.data(), ptrs(k), ptrs(v), shape, pool,
                        lengths);
  r.dq.assign(static_cast<size_t>(N * qw), 0.0f);
  r.dk.assign(k.size(), Vec(k[0].size(), 0.0f));
  r.dv = r.dk;
  ttt_attention_backward(r.dq.data(), mut_ptrs(r.dk), mut_ptrs(r.dv), dout.data(), q.data(),
                         ptrs(k), ptrs(v), r.probs.data(), shape, pool, lengths);
  return r;
}

TEST(TttAttentionRagged, EachSequenceGetsTheBitsOfItsOwnBatch) {
  ThreadPool pool(2);
  const int64_t H = 2, KV = 1, hd = 4, T = 7, s = 2, qw = H * hd, kw = KV * hd;
  const std::vector<int64_t> lengths = {7, 0, 3, 5};  // an empty window too
  const AttentionShape shape{4, T, H, KV, hd};
  int64_t N = 0, probs = 0;
  for (int64_t len : lengths) {
    N += len;
    probs += H * len * (len + s);
  }
  std::mt19937 g(3);
  const Vec q = rnd(N * qw, g, -1.5f, 1.5f), dout = rnd(N * qw, g);
  std::vector<Vec> k, v;
  random_keys_values(k, v, s, N * kw, g);
  const TttRun ragged = run_ttt(shape, lengths, q, k, v, dout, probs, pool);
  EXPECT_EQ(std::count(ragged.probs.begin(), ragged.probs.end(), -1.0f), 0)
      << "every probability written (the block layout covers the buffer)";

  int64_t row = 0, prob = 0;
  for (size_t b = 0; b < lengths.size(); ++b) {
    const int64_t len = lengths[b];
    if (len == 0) continue;
    std::vector<Vec> kb, vb;
    for (int64_t u = 0; u <= s; ++u) {
      kb.push_back(rows_of(k[u], kw, row, len));
      vb.push_back(rows_of(v[u], kw, row, len));
    }
    const TttRun alone = run_ttt(AttentionShape{1, len, H, KV, hd}, {}, rows_of(q, qw, row, len),
                                 kb, vb, rows_of(dout, qw, row, len), H * len * (len + s), pool);
    const std::string which = "sequence " + std::to_string(b);
    EXPECT_TRUE(same_bits(rows_of(ragged.out, qw, row, len), alone.out)) << which;
    EXPECT_TRUE(same_bits(
        Vec(ragged.probs.begin() + prob, ragged.probs.begin() + prob + H * len * (len + s)),
        alone.probs))
        << which;
    EXPECT_TRUE(same_bits(rows_of(ragged.dq, qw, row, len), alone.dq)) << which;
    for (int64_t u = 0; u <= s; ++u) {
      EXPECT_TRUE(same_bits(rows_of(ragged.dk[u], kw, row, len), alone.dk[u]))
          << which << " u " << u;
      EXPECT_TRUE(same_bits(rows_of(ragged.dv[u], kw, row, len), alone.dv[u]))
          << which << " u " << u;
    }
    row += len;
    prob += H * len * (len + s);
  }

  Vec out(q.size()), p(static_cast<size_t>(probs));
  const std::vector<int64_t> three = {7, 0, 3}, too_long = {7, 0, 3, 8};
  EXPECT_THROW(
      ttt_attention_forward(out.data(), p.data(), q.data(), ptrs(k), ptrs(v), shape, pool, three),
      Error);
  EXPECT_THROW(ttt_attention_forward(out.data(), p.data(), q.data(), ptrs(k), ptrs(v), shape, pool,
                                     too_long),
               Error);
}

// Eagle3Case with window 1's offsets from 3 on uncounted, so that it may run its first 2 rows only.
struct RaggedCase : Eagle3Case {
  std::vector<int64_t> lengths = {5, 2};
  RaggedCase() {
    for (int64_t p = 3; p < T + S; ++p) counted[(T + S) + p] = 0;
  }
  Eagle3Window ragged_window(float state_weight) {
    Eagle3Window w = window(state_weight);
    w.lengths = lengths.data();
    return w;
  }
};

struct UnrolledRun {
  Eagle3Loss loss;
  Vec hidden, grads;
};

UnrolledRun run_unrolled(RaggedCase& cs, const Eagle3Window& win, ThreadPool& pool) {
  std::vector<Parameter*> params;
  cs.w->collect(params);
  zero_grads(params);
  Eagle3Unrolled state;
  UnrolledRun r;
  r.loss = eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), win, state, pool);
  eagle3_unrolled_backward(cs.cfg, *cs.w, win, state, pool);
  for (Parameter* p : params) r.grads.insert(r.grads.end(), p->grad.begin(), p->grad.end());
  r.hidden = eagle3_unrolled_hidden(cs.cfg, *cs.w, cs.embed_matrix(), win, pool);
  return r;
}

TEST(Eagle3UnrolledRagged, RunsOnlyTheCountingRowsWithTheFullWindowsResult) {
  ThreadPool pool(2);
  for (float state_weight : {0.0f, 0.7f}) {
    RaggedCase cs;
    const UnrolledRun full = run_unrolled(cs, cs.window(state_weight), pool);
    const UnrolledRun ragged = run_unrolled(cs, cs.ragged_window(state_weight), pool);
    const std::string with = state_weight > 0 ? " (with the state term)" : "";
    EXPECT_EQ(ragged.loss.counted, full.loss.counted) << with;
    EXPECT_EQ(ragged.loss.counted, (std::vector<int64_t>{7, 6, 5})) << with;
    EXPECT_EQ(ragged.loss.correct, full.loss.correct) << with;
    EXPECT_NEAR(ragged.loss.total, full.loss.total, 1e-6 * full.loss.total) << with;
    // The kept rows: window 0's five, then window 1's first two (bitwise: rows are independent).
    const int64_t C = cs.cfg.hidden, N = 7;
    ASSERT_EQ(static_cast<int64_t>(ragged.hidden.size()), cs.S * N * C);
    for (int64_t s = 0; s < cs.S; ++s) {
      const Vec full_s = rows_of(full.hidden, C, s * cs.rows(), cs.rows());
      const Vec kept_s = rows_of(ragged.hidden, C, s * N, N);
      EXPECT_TRUE(same_bits(rows_of(kept_s, C, 0, 5), rows_of(full_s, C, 0, 5))) << s << with;
      EXPECT_TRUE(same_bits(rows_of(kept_s, C, 5, 2), rows_of(full_s, C, 5, 2))) << s << with;
    }
    // The gradients: the dropped rows added exact zeros, so only the summation order differs.
    expect_grad(ragged.grads, to_d(full.grads), ("ragged gradients" + with).c_str(), 1e-5);
  }
}

TEST(Eagle3UnrolledRagged, RefusesToDropARowThatCounts) {
  ThreadPool pool(1);
  RaggedCase cs;
  Eagle3Unrolled state;
  cs.counted[(cs.T + cs.S) + 3] = 1;  // window 1, offset 3: row 2's teacher at step 0
  EXPECT_THROW(
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.ragged_window(0), state, pool),
      Error);
  cs.counted[(cs.T + cs.S) + 3] = 0;
  cs.counted[(cs.T + cs.S) + 4] = 1;  // window 1, offset 4: row 3's teacher at step 0
  EXPECT_THROW(
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.ragged_window(0), state, pool),
      Error);
  cs.counted[(cs.T + cs.S) + 4] = 0;
  cs.counted[(cs.T + cs.S) + cs.T + cs.S - 1] = 1;  // the last offset: row 4's at the last step
  EXPECT_THROW(
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.ragged_window(0), state, pool),
      Error);
  cs.counted[(cs.T + cs.S) + cs.T + cs.S - 1] = 0;
  ASSERT_EQ(cs.counted[(cs.T + cs.S) + 2], 1);  // offset 2 counts: only kept rows read it
  EXPECT_NO_THROW(
      eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.ragged_window(0), state, pool));
  for (int64_t bad : {0, 6}) {
    cs.lengths[1] = bad;
    EXPECT_THROW(
        eagle3_unrolled_forward(cs.cfg, *cs.w, cs.embed_matrix(), cs.ragged_window(0), state, pool),
        Error)
        << bad;
  }
}

// The trainer's batches: a window cut by its sequence's end runs up to the sequence's
// second-to-last position, with the loss and gradients of the padded window.
TEST(Eagle3TrainerRagged, WindowsAtASequenceEndRunOnlyTheirRealRows) {
  LlamaConfig tc = test::tiny_config();
  tc.num_layers = 8;
  const auto target = test::load_random_model("e3-ragged", tc);
  ThreadPool pool(2);
  const std::vector<int32_t> layers = eagle3_default_layers(*target);
  std::vector<HeadSequence> data;
  std::mt19937 rng(7);
  for (int64_t len : {20, 13}) {
    std::vector<int32_t> t = {1};
    while (static_cast<int64_t>(t.size()) < len) t.push_back(static_cast<int32_t>(3 + rng() % 90));
    data.push_back(record_features(*target, t, pool, layers));
  }
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, tc.vocab_size, 48);
  Eagle3Trainer head(*target, v.ids, Eagle3Init{});
  Eagle3Batch batch;
  // Sequence 0 from 8: 12 positions, 11 of them with a next token; sequence 1 from 0: 12 of 13.
  // Sequence 0 from 16: 3 that count.
  head.fill(batch, data, {{0, 8}, {1, 0}, {0, 16}}, 12, 3, pool);
  EXPECT_EQ(batch.lengths, (std::vector<int64_t>{11, 12, 3}));

  auto loss_and_grads = [&](Vec& grads) {
    zero_grads(head.params());
    const Eagle3Loss loss = head.step(batch, true, pool, 0.5f);
    for (Parameter* p : head.params()) grads.insert(grads.end(), p->grad.begin(), p->grad.end());
    return loss;
  };
  Vec ragged_grads, full_grads;
  const Eagle3Loss ragged = loss_and_grads(ragged_grads);
  batch.lengths.clear();  // the padded window
  const Eagle3Loss full = loss_and_grads(full_grads);
  EXPECT_EQ(ragged.counted, full.counted);
  EXPECT_EQ(ragged.correct, full.correct);
  EXPECT_NEAR(ragged.total, full.total, 1e-6 * full.total);
  expect_grad(ragged_grads, to_d(full_grads), "the trainer's ragged gradients", 1e-5);
}

}  // namespace
}  // namespace eagle2::train
