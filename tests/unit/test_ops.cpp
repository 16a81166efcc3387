// Row-wise ops against double-precision references, plus the row-independence they promise; and
// the transpose kernel's paths against the definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ops.h"
#include "kernels/transpose.h"

namespace eagle2 {
namespace {

std::vector<float> random_vec(size_t n, std::mt19937& rng, float lo = -2.0f, float hi = 2.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

TEST(Ops, RmsnormMatchesReference) {
  std::mt19937 rng(1);
  for (int64_t n : {1, 3, 4, 5, 64, 127, 4096}) {
    const auto x = random_vec(static_cast<size_t>(n), rng);
    const auto w = random_vec(static_cast<size_t>(n), rng);
    const float eps = 1e-6f;
    std::vector<float> out(static_cast<size_t>(n));
    rmsnorm(x.data(), w.data(), eps, out.data(), n);
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double r = 1.0 / std::sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(out[i], w[i] * x[i] * r, 2e-6 * std::fabs(w[i] * x[i] * r) + 1e-7)
          << n << " " << i;
    // In place gives the same bits.
    std::vector<float> inplace = x;
    rmsnorm(inplace.data(), w.data(), eps, inplace.data(), n);
    EXPECT_EQ(0, std::memcmp(inplace.data(), out.data(), out.size() * 4));
  }
}

TEST(Ops, RmsnormOfZerosIsZero) {
  std::vector<float> x(8, 0.0f), w(8, 1.0f), out(8, 1.0f);
  rmsnorm(x.data(), w.data(), 1e-5f, out.data(), 8);
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(Ops, SwigluMatchesReference) {
  std::mt19937 rng(2);
  auto g = random_vec(1000, rng, -20.0f, 20.0f);
  const auto up = random_vec(1000, rng);
  g.push_back(-1000.0f);  // exp overflow: silu -> -0
  g.push_back(1000.0f);
  std::vector<float> up2 = up;
  up2.push_back(1.0f);
  up2.push_back(2.0f);
  std::vector<float> out = g;
  swiglu_inplace(out.data(), up2.data(), static_cast<int64_t>(out.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double gd = g[i];
    const double want = gd / (1.0 + std::exp(-gd)) * up2[i];
    EXPECT_NEAR(out[i], want, 1e-6 * std::fabs(want) + 1e-7) << "g=" << g[i];
    EXPECT_FALSE(std::isnan(out[i]));
  }
}

TEST(Ops, RopeRotateHalfMatchesHuggingFace) {
  std::mt19937 rng(3);
  for (int64_t hd : {2, 8, 64, 128}) {
    const int64_t h = hd / 2;
    auto x = random_vec(static_cast<size_t>(hd), rng);
    std::vector<float> c(static_cast<size_t>(h)), s(static_cast<size_t>(h));
    for (int64_t i = 0; i < h; ++i) {
      const double angle = 37.0 * std::pow(10000.0, -2.0 * i / hd);
      c[i] = static_cast<float>(std::cos(angle));
      s[i] = static_cast<float>(std::sin(angle));
    }
    const auto orig = x;
    rope_rotate_half(x.data(), c.data(), s.data(), hd);
    for (int64_t i = 0; i < h; ++i) {
      // HF: q * cos + rotate_half(q) * sin, rotate_half(q) = [-q2, q1].
      EXPECT_NEAR(x[i],
                  static_cast<double>(orig[i]) * c[i] - static_cast<double>(orig[i + h]) * s[i],
                  1e-6);
      EXPECT_NEAR(x[i + h],
                  static_cast<double>(orig[i + h]) * c[i] + static_cast<double>(orig[i]) * s[i],
                  1e-6);
    }
    // A rotation keeps the norm of each pair.
    for (int64_t i = 0; i < h; ++i)
      EXPECT_NEAR(std::hypot(x[i], x[i + h]), std::hypot(orig[i], orig[i + h]), 1e-5);
  }
}

TEST(Ops, SoftmaxMatchesReferenceAndSumsToOne) {
  std::mt19937 rng(4);
  for (int64_t n : {1, 2, 17, 32000}) {
    auto x = random_vec(static_cast<size_t>(n), rng, -30.0f, 30.0f);
    x[0] = 500.0f;  // large values must not overflow
    const auto orig = x;
    softmax_inplace(x.data(), n);
    double mx = -INFINITY, z = 0;
    for (float v : orig) mx = std::max(mx, static_cast<double>(v));
    for (float v : orig) z += std::exp(v - mx);
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(orig[i] - mx) / z;
      EXPECT_NEAR(x[i], want, 1e-6 * want + 1e-30);
      total += x[i];
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

// log_sum_exp on the active path (AVX-512's vector exp here; the scalar path elsewhere) against a
// double reference, on a vocabulary-sized row and the edge cases.
TEST(Ops, LogSumExpMatchesReference) {
  std::mt19937 rng(9);
  std::normal_distribution<float> g(0.0f, 6.0f);
  for (int64_t n : {1, 7, 16, 4096, 32001}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& e : x) e = g(rng);
    if (n > 3) x[2] = -INFINITY;  // a masked entry contributes nothing
    double mx = -INFINITY;
    for (float e : x) mx = std::max(mx, static_cast<double>(e));
    double sum = 0;
    for (float e : x) sum += std::exp(static_cast<double>(e) - mx);
    const double want = mx + std::log(sum);
    EXPECT_NEAR(log_sum_exp(x.data(), n), want, 2e-6 * std::fabs(want) + 1e-6) << "n=" << n;
    EXPECT_EQ(log_sum_exp(x.data(), n), log_sum_exp(x.data(), n));  // deterministic
  }
  EXPECT_EQ(log_sum_exp(nullptr, 0), -INFINITY);
  const float all_masked[3] = {-INFINITY, -INFINITY, -INFINITY};
  EXPECT_EQ(log_sum_exp(all_masked, 3), -INFINITY);
  const float single[1] = {2.5f};
  EXPECT_EQ(log_sum_exp(single, 1), 2.5f);
}

TEST(Ops, SoftmaxHandlesMinusInfinity) {
  std::vector<float> x = {-INFINITY, 0.0f, -INFINITY, 0.0f};
  softmax_inplace(x.data(), 4);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[1], 0.5f);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_EQ(x[3], 0.5f);
}

// Every path of transpose32 moves each element of a strided block to its place and touches nothing
// else: full 8 x 8 blocks, edges of every width, and strides wider than the block.
TEST(Ops, TransposeMovesEveryElementOnEveryPath) {
  for (KernelPath p : {KernelPath::Scalar, KernelPath::Avx2, KernelPath::Avx512}) {
    if (!cpu_supports(p)) continue;
    for (auto [rows, cols] :
         {std::pair<int64_t, int64_t>{1, 1}, {3, 8}, {8, 8}, {8, 3}, {7, 9}, {16, 24}, {33, 70}}) {
      const int64_t lds = cols + 5, ldd = rows + 3;
      std::vector<uint32_t> src(static_cast<size_t>(rows * lds));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(i * 2654435761u);
      std::vector<uint32_t> dst(static_cast<size_t>(cols * ldd), 0xdeadbeefu);
      transpose32(p, src.data(), lds, rows, cols, dst.data(), ldd);
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = 0; r < ldd; ++r) {
          const uint32_t want = r < rows ? src[static_cast<size_t>(r * lds + c)] : 0xdeadbeefu;
          ASSERT_EQ(dst[static_cast<size_t>(c * ldd + r)], want)
              << kernel_path_name(p) << " " << rows << "x" << cols << " at " << r << "," << c;
        }
    }
  }
}

}  // namespace
}  // namespace eagle2
