// Attention of one head: against a double-precision reference on every path, SIMD paths against
// the scalar one, and the split invariance that batch invariance rests on: the same sequence of
// visible slots gives the same bits wherever the context/extra boundary falls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/attention_internal.h"
#include "kernels/matmul.h"

namespace eagle2 {
namespace {

const KernelPath kAllPaths[] = {KernelPath::Scalar, KernelPath::Avx2, KernelPath::Avx512};

struct Cache {
  int64_t head_dim, stride, n_slots;
  std::vector<float> k, v;
};

Cache random_cache(int64_t n_slots, int64_t head_dim, std::mt19937& rng) {
  // Padding between slots (stride > head_dim) as in a multi-head KV cache.
  Cache c{head_dim, head_dim + 5, n_slots, {}, {}};
  std::normal_distribution<float> g(0.0f, 1.0f);
  c.k.resize(static_cast<size_t>(n_slots * c.stride));
  c.v.resize(c.k.size());
  for (auto& e : c.k) e = g(rng);
  for (auto& e : c.v) e = g(rng);
  return c;
}

std::vector<double> reference(const float* q, const Cache& c, const std::vector<int64_t>& slots,
                              float scale) {
  std::vector<double> s(slots.size()), out(static_cast<size_t>(c.head_dim), 0.0);
  double mx = -INFINITY;
  for (size_t j = 0; j < slots.size(); ++j) {
    double d = 0;
    for (int64_t i = 0; i < c.head_dim; ++i)
      d += static_cast<double>(q[i]) * c.k[slots[j] * c.stride + i];
    s[j] = d * scale;
    mx = std::max(mx, s[j]);
  }
  double z = 0;
  for (auto& e : s) z += (e = std::exp(e - mx));
  for (size_t j = 0; j < slots.size(); ++j)
    for (int64_t i = 0; i < c.head_dim; ++i) out[i] += s[j] / z * c.v[slots[j] * c.stride + i];
  return out;
}

// Runs attention over `slots` presented as a context prefix of length `n_ctx` (must be slots
// 0..n_ctx-1) followed by the rest as extras.
std::vector<float> run(KernelPath path, const float* q, const Cache& c,
                       const std::vector<int64_t>& slots, int64_t n_ctx, float scale) {
  std::vector<int32_t> extra;
  for (size_t j = static_cast<size_t>(n_ctx); j < slots.size(); ++j)
    extra.push_back(static_cast<int32_t>(slots[j]));
  AttentionKeys keys;
  keys.k = c.k.data();
  keys.v = c.v.data();
  keys.stride = c.stride;
  keys.n_context = n_ctx;
  keys.extra = extra.data();
  keys.n_extra = static_cast<int64_t>(extra.size());
  std::vector<float> scratch(slots.size() + 1), out(static_cast<size_t>(c.head_dim), NAN);
  attention_head(path, q, keys, c.head_dim, scale, scratch.data(), out.data());
  return out;
}

TEST(Attention, MatchesDoubleReference) {
  std::mt19937 rng(11);
  for (int64_t hd : {1, 7, 16, 64, 80, 128, 130, 256}) {
    for (int64_t n : {1, 2, 9, 100}) {
      const Cache c = random_cache(n + 3, hd, rng);
      std::normal_distribution<float> g(0.0f, 1.0f);
      std::vector<float> q(static_cast<size_t>(hd));
      for (auto& e : q) e = g(rng);
      const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
      // Context 0..n/2-1, then a sparse, increasing set of extras (a tree's ancestors).
      std::vector<int64_t> slots;
      const int64_t n_ctx = n / 2;
      for (int64_t j = 0; j < n_ctx; ++j) slots.push_back(j);
      for (int64_t j = n_ctx; static_cast<int64_t>(slots.size()) < n; ++j)
        slots.push_back(j + (j % 2));
      const auto want = reference(q.data(), c, slots, scale);
      std::vector<float> scalar;
      for (KernelPath p : kAllPaths) {
        if (!cpu_supports(p)) continue;
        const auto out = run(p, q.data(), c, slots, n_ctx, scale);
        for (int64_t i = 0; i < hd; ++i)
          ASSERT_NEAR(out[i], want[i], 1e-5 * (1 + std::fabs(want[i])))
              << kernel_path_name(p) << " hd=" << hd << " n=" << n << " i=" << i;
        if (p == KernelPath::Scalar) scalar = out;
        for (int64_t i = 0; i < hd; ++i)
          ASSERT_NEAR(out[i], scalar[i], 1e-5 * (1 + std::fabs(scalar[i])));
      }
    }
  }
}

TEST(Attention, SplitPointDoesNotChangeBits) {
  std::mt19937 rng(12);
  for (KernelPath p : kAllPaths) {
    if (!cpu_supports(p)) continue;
    for (int64_t hd : {64, 100, 128}) {
      const int64_t n = 37;
      const Cache c = random_cache(n, hd, rng);
      std::normal_distribution<float> g(0.0f, 2.0f);
      std::vector<float> q(static_cast<size_t>(hd));
      for (auto& e : q) e = g(rng);
      std::vector<int64_t> slots;
      for (int64_t j = 0; j < n; ++j) slots.push_back(j);
      const float scale = 0.125f;
      const auto base = run(p, q.data(), c, slots, n, scale);
      for (int64_t split : {int64_t{0}, int64_t{1}, n / 2, n - 1, n}) {
        const auto out = run(p, q.data(), c, slots, split, scale);
        EXPECT_EQ(0, std::memcmp(out.data(), base.data(), base.size() * 4))
            << kernel_path_name(p) << " hd=" << hd << " split=" << split;
      }
    }
  }
}

TEST(Attention, SingleSlotReturnsItsValue) {
  std::mt19937 rng(13);
  const Cache c = random_cache(4, 32, rng);
  std::vector<float> q(32, 0.3f);
  for (KernelPath p : kAllPaths) {
    if (!cpu_supports(p)) continue;
    const auto out = run(p, q.data(), c, {2}, 0, 1.0f);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], c.v[2 * c.stride + i]) << kernel_path_name(p);
  }
}

TEST(Attention, NoVisibleSlotGivesZeros) {
  std::mt19937 rng(14);
  const Cache c = random_cache(1, 16, rng);
  std::vector<float> q(16, 1.0f);
  for (KernelPath p : kAllPaths) {
    if (!cpu_supports(p)) continue;
    const auto out = run(p, q.data(), c, {}, 0, 1.0f);
    for (float v : out) EXPECT_EQ(v, 0.0f);
  }
}

// attention_batch (all rows and heads of a layer, sharing context reads on the SIMD paths) must
// give every row and head exactly attention_head's bits: across paths, group sizes, head sizes
// (whole and partial vectors, over 64 dims), empty and non-empty contexts (over 64 slots: several
// blocks of shared value rows), rows with no extras, thread counts.
TEST(Attention, BatchEqualsOneHeadAtATimeBitForBit) {
  std::mt19937 rng(17);
  std::normal_distribution<float> g(0.0f, 1.0f);
  ThreadPool pool(2);
  for (KernelPath p : kAllPaths) {
    if (!cpu_supports(p)) continue;
    for (auto [H, KV] : {std::pair<int64_t, int64_t>{4, 4}, {8, 4}, {8, 2}})
      for (int64_t hd : {7, 16, 64, 80})
        for (int64_t n_ctx : {0, 5, 37, 150})
          for (int64_t T : {1, 3, 9}) {
            const int64_t kvd = KV * hd, qd = H * hd, n_slots = n_ctx + T;
            std::vector<float> k(static_cast<size_t>(n_slots * kvd)), v(k.size()),
                q(static_cast<size_t>(T * qd));
            for (auto& e : k) e = g(rng);
            for (auto& e : v) e = g(rng);
            for (auto& e : q) e = g(rng);
            // Row i sees rows 0, 2, 4, .. < i and itself (a tree-like mask); with no context,
            // row 0 of a T = 3 batch sees nothing at all (zeros).
            std::vector<int32_t> visible;
            std::vector<int64_t> begin(1, 0);
            for (int64_t i = 0; i < T; ++i) {
              for (int64_t r = 0; r < i; r += 2) visible.push_back(static_cast<int32_t>(n_ctx + r));
              if (!(n_ctx == 0 && T == 3 && i == 0))
                visible.push_back(static_cast<int32_t>(n_ctx + i));
              begin.push_back(static_cast<int64_t>(visible.size()));
            }
            AttentionBatch b;
            b.q = q.data();
            b.k = k.data();
            b.v = v.data();
            b.stride = kvd;
            const AttentionSequence seq{.table = nullptr, .n_context = n_ctx};
            b.sequences = &seq;
            b.visible = visible.data();
            b.visible_begin = begin.data();
            b.n_rows = T;
            b.n_heads = H;
            b.n_kv_heads = KV;
            b.head_dim = hd;
            b.scale = 0.3f;
            std::vector<float> out(static_cast<size_t>(T * qd), NAN);
            b.out = out.data();
            attention_batch(p, b, pool);
            std::vector<float> scratch(static_cast<size_t>(n_slots + 1)),
                want(static_cast<size_t>(hd));
            for (int64_t i = 0; i < T; ++i)
              for (int64_t h = 0; h < H; ++h) {
                AttentionKeys keys;
                keys.k = k.data() + (h / (H / KV)) * hd;
                keys.v = v.data() + (h / (H / KV)) * hd;
                keys.stride = kvd;
                keys.n_context = n_ctx;
                keys.extra = visible.data() + begin[i];
                keys.n_extra = begin[i + 1] - begin[i];
                attention_head(p, &q[i * qd + h * hd], keys, hd, 0.3f, scratch.data(), want.data());
                ASSERT_EQ(0, std::memcmp(want.data(), &out[i * qd + h * hd], hd * 4))
                    << kernel_path_name(p) << " H=" << H << " KV=" << KV << " hd=" << hd
                    << " n_ctx=" << n_ctx << " T=" << T << " row " << i << " head " << h;
              }
          }
  }
}

// The AVX-512 scores go 16 keys at a time through a transposed lane sum; each must still be the
// bits of the one-key dot_f32 (the order matmul and the one-key loop use), for every count of
// keys (full and partial groups of 16) and every head size (full and masked vectors).
TEST(Attention, Avx512ScoresEqualOneKeyDots) {
  if (!cpu_supports(KernelPath::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(15);
  for (int64_t hd : {1, 16, 33, 64, 128}) {
    for (int64_t n : {1, 15, 16, 17, 40}) {
      const Cache c = random_cache(n + 2, hd, rng);
      std::normal_distribution<float> g(0.0f, 3.0f);
      std::vector<float> q(static_cast<size_t>(hd));
      for (auto& e : q) e = g(rng);
      // Context 0..n/3-1, then every slot from n/3 + 2 on as extras (skipping two).
      const int64_t n_ctx = n / 3;
      std::vector<int32_t> extra;
      for (int64_t j = n_ctx + 2; static_cast<int64_t>(extra.size()) < n - n_ctx; ++j)
        extra.push_back(static_cast<int32_t>(j));
      std::vector<float> s(static_cast<size_t>(n) + 1, -1.0f);
      const float scale = 0.37f;
      detail::attention_scores_avx512(q.data(), c.k.data(), c.stride, nullptr, 0, n_ctx,
                                      extra.data(), static_cast<int64_t>(extra.size()), hd, scale,
                                      s.data());
      for (int64_t j = 0; j < n; ++j) {
        const int64_t slot = j < n_ctx ? j : extra[static_cast<size_t>(j - n_ctx)];
        const float want = dot_f32(KernelPath::Avx512, q.data(), &c.k[slot * c.stride], hd) * scale;
        ASSERT_EQ(0, std::memcmp(&want, &s[static_cast<size_t>(j)], 4))
            << "hd=" << hd << " n=" << n << " j=" << j;
      }
      EXPECT_EQ(s[static_cast<size_t>(n)], -1.0f) << "wrote past the last score";
    }
  }
}

TEST(Attention, Avx512SoftmaxMatchesExpAndSum) {
  if (!cpu_supports(KernelPath::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(16);
  std::normal_distribution<float> g(0.0f, 8.0f);
  for (int64_t n : {1, 5, 16, 31, 300}) {
    std::vector<float> s(static_cast<size_t>(n));
    for (auto& e : s) e = g(rng);
    if (n > 2) s[1] = -200.0f;  // underflows to 0, as expf does
    const float mx = *std::max_element(s.begin(), s.end());
    std::vector<double> want(s.size());
    double sum = 0;
    // The argument is the float difference, as in every path; the exp itself is what is checked.
    for (size_t j = 0; j < s.size(); ++j)
      sum += (want[j] = std::exp(static_cast<double>(s[j] - mx)));
    std::vector<float> p = s;
    const float inv_sum = detail::softmax_avx512(p.data(), n);
    EXPECT_NEAR(inv_sum, 1.0 / sum, 1e-6 / sum) << "n=" << n;
    for (size_t j = 0; j < s.size(); ++j)
      ASSERT_NEAR(p[j], want[j], 2e-7 * want[j] + 1e-38) << "n=" << n << " j=" << j;
  }
}

}  // namespace
}  // namespace eagle2

namespace eagle2 {
namespace {

// A paged cache read through its block table gives the bits of the same slots stored in order:
// on every path, for block sizes 1, 16 and 64, blocks in a shuffled order, and two sequences
// (different tables and contexts) in one attention_batch.
TEST(Attention, BlockTablesReadTheSameBitsAsContiguousSlots) {
  std::mt19937 rng(23);
  std::normal_distribution<float> g(0.0f, 1.0f);
  ThreadPool pool(2);
  const int64_t H = 8, KV = 2, hd = 48, kvd = KV * hd, qd = H * hd;
  for (KernelPath p : kAllPaths) {
    if (!cpu_supports(p)) continue;
    for (int shift : {0, 4, 6}) {
      const int64_t B = int64_t{1} << shift;
      // Two sequences: context lengths and pending rows; each gets blocks from a shuffled list.
      const int64_t ctx[2] = {37, 90}, rows[2] = {3, 2};
      int64_t n_blocks = 0;
      for (int s = 0; s < 2; ++s) n_blocks += (ctx[s] + rows[s] + B - 1) / B;
      std::vector<int32_t> order(static_cast<size_t>(n_blocks));
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<float> k(static_cast<size_t>(n_blocks * B * kvd)), v(k.size());
      for (auto& e : k) e = g(rng);
      for (auto& e : v) e = g(rng);
      std::vector<std::vector<int32_t>> table(2);
      size_t next = 0;
      for (int s = 0; s < 2; ++s)
        for (int64_t b = 0; b < (ctx[s] + rows[s] + B - 1) / B; ++b)
          table[s].push_back(order[next++]);
      // The same slots copied out in logical order, per sequence.
      std::vector<std::vector<float>> k_flat(2), v_flat(2);
      for (int s = 0; s < 2; ++s)
        for (int64_t slot = 0; slot < ctx[s] + rows[s]; ++slot) {
          const int64_t row =
              (int64_t{table[s][static_cast<size_t>(slot >> shift)]} << shift) | (slot & (B - 1));
          k_flat[s].insert(k_flat[s].end(), &k[row * kvd], &k[(row + 1) * kvd]);
          v_flat[s].insert(v_flat[s].end(), &v[row * kvd], &v[(row + 1) * kvd]);
        }
      // Rows: sequence 0's three (a chain), then sequence 1's two (siblings).
      const int64_t T = rows[0] + rows[1];
      std::vector<float> q(static_cast<size_t>(T * qd));
      for (auto& e : q) e = g(rng);
      const std::vector<int32_t> seq_of = {0, 0, 0, 1, 1};
      const std::vector<int32_t> visible = {37, 37, 38, 37, 38, 39, 90, 91};
      const std::vector<int64_t> begin = {0, 1, 3, 6, 7, 8};
      const AttentionSequence seqs[2] = {{table[0].data(), ctx[0]}, {table[1].data(), ctx[1]}};
      AttentionBatch b;
      b.q = q.data();
      b.k = k.data();
      b.v = v.data();
      b.stride = kvd;
      b.shift = shift;
      b.sequences = seqs;
      b.row_sequence = seq_of.data();
      b.visible = visible.data();
      b.visible_begin = begin.data();
      b.n_rows = T;
      b.n_heads = H;
      b.n_kv_heads = KV;
      b.head_dim = hd;
      b.scale = 0.2f;
      std::vector<float> out(static_cast<size_t>(T * qd), NAN), want(static_cast<size_t>(hd)),
          scratch(256);
      b.out = out.data();
      attention_batch(p, b, pool);
      for (int64_t i = 0; i < T; ++i)
        for (int64_t h = 0; h < H; ++h) {
          const int s = seq_of[static_cast<size_t>(i)];
          AttentionKeys keys;
          keys.k = k_flat[s].data() + (h / (H / KV)) * hd;
          keys.v = v_flat[s].data() + (h / (H / KV)) * hd;
          keys.stride = kvd;
          keys.n_context = ctx[s];
          keys.extra = visible.data() + begin[static_cast<size_t>(i)];
          keys.n_extra = begin[static_cast<size_t>(i) + 1] - begin[static_cast<size_t>(i)];
          attention_head(p, &q[i * qd + h * hd], keys, hd, 0.2f, scratch.data(), want.data());
          ASSERT_EQ(0, std::memcmp(want.data(), &out[i * qd + h * hd], hd * sizeof(float)))
              << kernel_path_name(p) << " block " << B << " row " << i << " head " << h;
        }
    }
  }
}

}  // namespace
}  // namespace eagle2
