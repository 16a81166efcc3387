// Quantized weights (every block type): the block formats against their dequantized values,
// the reference kernel against a double-precision dot of the dequantized operands, every SIMD
// path against the reference bit for bit (quant_matmul.h fixes one order for all paths), and batch
// invariance bit for bit across batch size, batch company, thread count and mixed-dtype dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/quant_blocks.h"
#include "core/quant_codes.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/quant_matmul.h"
#include "support/quant_blocks_random.h"

namespace eagle2 {
namespace {

const KernelPath kAllPaths[] = {KernelPath::Scalar, KernelPath::Avx2, KernelPath::Avx512};

// Whether the CPU has the path; says so where it does not, so that a run on an AVX2-only machine
// shows which kernels it did not check.
bool runs_on_this_cpu(KernelPath path) {
  if (cpu_supports(path)) return true;
  std::printf("%s: skipped: no %s on this CPU\n", kernel_path_name(path),
              path == KernelPath::Avx512 ? "AVX-512" : "AVX2");
  return false;
}
const DType kBlockTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K,
                             DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::IQ4_NL,
                             DType::Q5_K, DType::Q3_K, DType::Q2_K, DType::IQ4_XS};

using test::random_blocks;

std::vector<float> quant_random_vec(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

std::string label(KernelPath p, DType dt, int64_t M, int64_t N, int64_t K) {
  return std::string(kernel_path_name(p)) + " " + dtype_name(dt) + " M=" + std::to_string(M) +
         " N=" + std::to_string(N) + " K=" + std::to_string(K);
}

struct Shape {
  int64_t M, N, K;
};

// K in whole blocks of each type: one block, a number of blocks that is not a multiple of the
// eight lanes, and more than eight.
std::vector<Shape> shapes_for(DType dt) {
  const int64_t b = dtype_block_elements(dt);
  return {{1, 5, b}, {3, 17, 5 * b}, {4, 8, 8 * b}, {7, 9, 11 * b}, {9, 33, 3 * b}, {1, 3, 17 * b}};
}

// Half a step, plus what rounding the scale to f16 (11 bits) moves the largest code (127 * 2^-11).
TEST(QuantBlocks, RoundTripsWithinHalfAStep) {
  std::mt19937 rng(1);
  for (DType dt : {DType::Q8_0, DType::Q4_0}) {
    const std::vector<float> x = quant_random_vec(32 * 64, rng);
    std::vector<unsigned char> q(dtype_bytes(dt, 32 * 64));
    quantize_blocks(dt, x.data(), q.data(), 32 * 64);
    std::vector<float> back(x.size());
    dequantize_blocks(dt, q.data(), back.data(), 32 * 64);
    for (size_t b = 0; b < 64; ++b) {
      float amax = 0;
      for (size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
      const float step = amax / (dt == DType::Q8_0 ? 127.0f : 8.0f);
      // Q4_0 codes run -8..7: a value of the sign opposite to the extreme can be clipped a step.
      const float bound = dt == DType::Q8_0 ? 0.57f : 1.01f;
      for (size_t j = 0; j < 32; ++j)
        ASSERT_LE(std::fabs(back[b * 32 + j] - x[b * 32 + j]), bound * step + 1e-6f)
            << dtype_name(dt) << " block " << b << " element " << j;
    }
  }
  EXPECT_THROW(quantize_blocks(DType::Q4_K, nullptr, nullptr, 256), Error);
  EXPECT_THROW(dequantize_blocks(DType::Q8_0, nullptr, nullptr, 31), Error);
}

// ggml's Q4_0 rounding, by hand on one block: the largest magnitude maps to -8 (scale max / -8).
TEST(QuantBlocks, Q4_0MatchesGgmlOnAKnownBlock) {
  std::vector<float> x(32, 0.0f);
  x[0] = -4.0f;  // largest magnitude: d = -4 / -8 = 0.5, q = x / d + 8
  x[1] = 1.0f;   // 2 + 8 = 10
  x[16] = 3.4f;  // 6.8 + 8.5 = 15.3 -> 15
  BlockQ4_0 b;
  quantize_blocks(DType::Q4_0, x.data(), &b, 32);
  EXPECT_EQ(f16_to_f32(b.d), 0.5f);
  EXPECT_EQ(b.qs[0] & 0xF, 0);
  EXPECT_EQ(b.qs[1] & 0xF, 10);
  EXPECT_EQ(b.qs[0] >> 4, 15);
  EXPECT_EQ(b.qs[2] & 0xF, 8);  // zero
}

// The reference kernel equals sum_k w[k] * xq[k] * scale over the dequantized operands.
TEST(QuantMatmul, ScalarMatchesDoubleReference) {
  std::mt19937 rng(2);
  ThreadPool pool(1);
  for (DType dt : kBlockTypes)
    for (const Shape& s : shapes_for(dt)) {
      const auto w = random_blocks(dt, s.N, s.K, rng);
      const auto x = quant_random_vec(static_cast<size_t>(s.M * s.K), rng);
      std::vector<float> y(static_cast<size_t>(s.M * s.N));
      matmul_with(KernelPath::Scalar, x.data(), s.M, Matrix{dt, s.N, s.K, w.data()}, y.data(),
                  pool);
      QuantizedRows q;
      quantize_rows(dt, x.data(), s.M, s.K, &q);
      std::vector<float> wrow(static_cast<size_t>(s.K));
      for (int64_t n = 0; n < s.N; ++n) {
        dequantize_blocks(dt, w.data() + static_cast<size_t>(n) * dtype_bytes(dt, s.K), wrow.data(),
                          s.K);
        for (int64_t m = 0; m < s.M; ++m) {
          double ref = 0, mag = 0;
          for (int64_t k = 0; k < s.K; ++k) {
            const double xv = static_cast<double>(q.qs[static_cast<size_t>(m * s.K + k)]) *
                              q.scale[static_cast<size_t>(m * (s.K / q.block) + k / q.block)];
            ref += xv * wrow[static_cast<size_t>(k)];
            mag += std::fabs(xv * wrow[static_cast<size_t>(k)]);
          }
          ASSERT_NEAR(y[static_cast<size_t>(m * s.N + n)], ref, 1e-5 * mag + 1e-7)
              << label(KernelPath::Scalar, dt, s.M, s.N, s.K) << " m=" << m << " n=" << n;
        }
      }
    }
}

// The activations are what ggml makes: Q8_0 scale amax / 127 in f16, Q8_K scale max / -127.
TEST(QuantMatmul, ActivationsQuantizeAsGgml) {
  std::vector<float> x(256, 0.0f);
  x[3] = -2.54f;
  x[40] = 1.0f;
  QuantizedRows q;
  quantize_rows(DType::Q4_0, x.data(), 1, 256, &q);
  EXPECT_EQ(q.scale[0], f16_to_f32(f32_to_f16(2.54f / 127.0f)));
  EXPECT_EQ(q.qs[3], -127);
  EXPECT_EQ(q.sums[0], -127);
  EXPECT_EQ(q.qs[40], 127);  // alone in its block
  // Scale exactly 1 (amax 127): ties round to even, as ggml's nearest_int; NaN becomes 0.
  std::vector<float> t(32, 0.0f);
  t[0] = 127.0f;
  t[1] = 2.5f;
  t[2] = 3.5f;
  t[3] = -2.5f;
  t[4] = 126.5f;
  t[5] = std::nanf("");
  quantize_rows(DType::Q8_0, t.data(), 1, 32, &q);
  EXPECT_EQ(q.scale[0], 1.0f);
  EXPECT_EQ(std::vector<int>(q.qs.begin(), q.qs.begin() + 6),
            (std::vector<int>{127, 2, 4, -2, 126, 0}));
  quantize_rows(DType::Q6_K, x.data(), 1, 256, &q);
  EXPECT_EQ(q.block, 256);
  EXPECT_EQ(q.scale[0], 1.0f / (-127.0f / -2.54f));
  EXPECT_EQ(q.qs[3], -127);  // the element of largest magnitude maps to -127 times its sign
  EXPECT_EQ(q.qs[40], 50);   // 1.0 * 127 / 2.54 = 50
  EXPECT_EQ(q.sums[2], 50);  // bsums per 16
}

// The AVX-512 activation quantizer writes the reference's bytes: random rows at several scales,
// plus blocks that test each rule (all zero, NaN and infinities, exact ties, +amax after -amax).
TEST(QuantMatmul, Avx512ActivationsAreTheReferencesBytes) {
  if (!cpu_supports(KernelPath::Avx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  std::mt19937 rng(11);
  const int64_t M = 6, K = 768;
  std::vector<float> x(static_cast<size_t>(M * K));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < K; ++k)
      x[static_cast<size_t>(m * K + k)] =
          normal(rng) * std::ldexp(1.0f, static_cast<int>(m * 4) - 8);
  float* row = x.data() + 5 * K;
  std::fill(row, row + 32, 0.0f);         // a zero Q8_0 block
  std::fill(row + 256, row + 512, 0.0f);  // a zero Q8_K block ...
  row[300] = std::nanf("");               // ... but for a NaN, which counts as nothing
  row[40] = std::nanf("");
  row[41] = INFINITY;  // scale inf: every code 0
  for (int j = 64; j < 96; ++j) row[j] = static_cast<float>(j - 80) + 0.5f;  // ties at scale 1
  row[64] = 127.0f;
  for (int j = 512; j < 768; ++j) row[j] = 0.25f;
  row[600] = -3.0f, row[700] = 3.0f;  // Q8_K keeps the first of +-amax: -3
  for (DType dt : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    QuantizedRows ref, fast;
    quantize_rows(dt, x.data(), M, K, &ref, KernelPath::Scalar);
    quantize_rows(dt, x.data(), M, K, &fast, KernelPath::Avx512);
    const size_t n_scales = static_cast<size_t>(M * K / ref.block),
                 n_sums = static_cast<size_t>(M * K / ref.sum_group);
    EXPECT_EQ(0, std::memcmp(ref.qs.data(), fast.qs.data(), static_cast<size_t>(M * K)))
        << dtype_name(dt);
    EXPECT_EQ(0, std::memcmp(ref.scale.data(), fast.scale.data(), n_scales * sizeof(float)))
        << dtype_name(dt);
    EXPECT_EQ(0, std::memcmp(ref.sums.data(), fast.sums.data(), n_sums * sizeof(int32_t)))
        << dtype_name(dt);
  }
  // The special blocks did what the rules say (so the comparison covered them).
  QuantizedRows q;
  quantize_rows(DType::Q8_0, x.data(), M, K, &q, KernelPath::Avx512);
  EXPECT_EQ(q.scale[5 * K / 32], 0.0f);
  EXPECT_EQ(q.scale[5 * K / 32 + 2], 1.0f);
  EXPECT_EQ(q.qs[static_cast<size_t>(5 * K + 65)], -14);  // -14.5 -> -14 (even)
  EXPECT_EQ(q.qs[static_cast<size_t>(5 * K + 66)], -14);  // -13.5 -> -14
  quantize_rows(DType::Q6_K, x.data(), M, K, &q, KernelPath::Avx512);
  EXPECT_EQ(q.scale[5 * K / 256 + 1], 0.0f);
  EXPECT_EQ(q.scale[5 * K / 256 + 2], 1.0f / (-127.0f / -3.0f));
  EXPECT_EQ(q.qs[static_cast<size_t>(5 * K + 600)], -127);
  EXPECT_EQ(q.qs[static_cast<size_t>(5 * K + 700)], 127);
}

TEST(QuantMatmul, EveryPathGivesTheReferenceBits) {
  std::mt19937 rng(3);
  for (KernelPath path : kAllPaths) {
    if (path == KernelPath::Scalar || !runs_on_this_cpu(path)) continue;
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      for (DType dt : kBlockTypes)
        for (const Shape& s : shapes_for(dt)) {
          const auto w = random_blocks(dt, s.N, s.K, rng);
          const auto x = quant_random_vec(static_cast<size_t>(s.M * s.K), rng, 3.0f);
          const Matrix W{dt, s.N, s.K, w.data()};
          std::vector<float> want(static_cast<size_t>(s.M * s.N)), got(want.size());
          matmul_with(KernelPath::Scalar, x.data(), s.M, W, want.data(), pool);
          matmul_with(path, x.data(), s.M, W, got.data(), pool);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
              << label(path, dt, s.M, s.N, s.K) << " threads " << threads;
        }
    }
  }
}

// The K-quants (and every type but Q8_0/Q4_0) over the batch sizes the tiles split differently
// (1..9 rows: every remainder of the four-row tiles; 63..65 around the 64-row task blocks) and row
// lengths of 1, 3, 8, 9 and 11 superblocks (every remainder of the four-superblock groups, and more
// than eight).
TEST(QuantMatmul, KQuantsGiveTheReferenceBitsForEveryBatchAndLength) {
  std::mt19937 rng(6);
  ThreadPool pool(2);
  for (KernelPath path : kAllPaths) {
    if (path == KernelPath::Scalar || !runs_on_this_cpu(path)) continue;
    for (DType dt : kBlockTypes)
      for (int64_t K : {256, 3 * 256, 8 * 256, 9 * 256, 11 * 256}) {
        if (dt == DType::Q8_0 || dt == DType::Q4_0) continue;  // their own tests below
        // The types of core/quant_codes.h have no four-superblock groups: two lengths do.
        if (is_codes_dtype(dt) && K != 256 && K != 9 * 256) continue;
        const int64_t N = 22;  // a group of sixteen columns (quant_kcols16_avx512.cpp) and six more
        const auto w = random_blocks(dt, N, K, rng);
        const Matrix W{dt, N, K, w.data()};
        const auto x = quant_random_vec(static_cast<size_t>(65 * K), rng, 2.0f);
        for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 8, 9, 63, 64, 65}) {
          std::vector<float> want(static_cast<size_t>(M * N)), got(want.size());
          matmul_with(KernelPath::Scalar, x.data(), M, W, want.data(), pool);
          matmul_with(path, x.data(), M, W, got.data(), pool);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
              << label(path, dt, M, N, K);
        }
      }
  }
}

// Blocks a file may hold that random bytes rarely produce (every type but Q8_0/Q4_0): every quant
// byte 0x00 or 0xFF (codes and 6-bit scales/mins at their extremes), Q6_K scales all -128 or all
// 127, against activations at
// +-127 (constant rows, alternating signs): the integer sums at their largest, where a saturating
// or overflowing step would show. f16 scales stay finite so every output is a number.
TEST(QuantMatmul, KQuantExtremeBlocksGiveTheReferenceBits) {
  ThreadPool pool(1);
  const int64_t K = 3 * 256, M = 5;
  std::vector<float> x(static_cast<size_t>(M * K));
  for (int64_t k = 0; k < K; ++k) {
    x[static_cast<size_t>(k)] = 1.0f;                                      // all +127
    x[static_cast<size_t>(K + k)] = -1.0f;                                 // all -127
    x[static_cast<size_t>(2 * K + k)] = k % 2 ? 1.0f : -1.0f;              // alternating
    x[static_cast<size_t>(3 * K + k)] = k % 32 < 16 ? 1.0f : -1.0f;        // by 16-group
    x[static_cast<size_t>(4 * K + k)] = static_cast<float>(k % 7) - 3.0f;  // mixed
  }
  for (KernelPath path : kAllPaths) {
    if (path == KernelPath::Scalar || !runs_on_this_cpu(path)) continue;
    for (DType dt : kBlockTypes)
      for (unsigned char fill : {0x00, 0xFF, 0x80, 0x7F, 0x0F, 0xF0}) {
        if (dt == DType::Q8_0 || dt == DType::Q4_0) continue;
        const int64_t N = 19;  // a group of sixteen columns and three more
        std::vector<unsigned char> w(dtype_bytes(dt, K) * N, fill);
        const int64_t nb = static_cast<int64_t>(w.size() / dtype_block_bytes(dt));
        for (int64_t i = 0; i < nb; ++i) {
          unsigned char* blk = w.data() + static_cast<size_t>(i) * dtype_block_bytes(dt);
          const uint16_t d = f32_to_f16(i % 2 ? -0.5f : 0.25f), dmin = f32_to_f16(0.125f);
          // Where each type keeps its f16 d and dmin (or m); the other bytes keep the fill.
          switch (dt) {
            case DType::Q6_K:
              std::memcpy(blk + 208, &d, 2);  // scales[16] at 192 keep the fill: 0x80 = -128
              break;
            case DType::Q3_K:
              std::memcpy(blk + 108, &d, 2);
              break;
            case DType::Q2_K:
              std::memcpy(blk + 80, &d, 2);
              std::memcpy(blk + 82, &dmin, 2);
              break;
            case DType::Q5_0:
            case DType::IQ4_NL:
            case DType::IQ4_XS:  // its scales_h at 2 keeps the fill
              std::memcpy(blk, &d, 2);
              break;
            default:  // Q4_K, Q5_K, Q4_1, Q5_1
              std::memcpy(blk, &d, 2);
              std::memcpy(blk + 2, &dmin, 2);
              break;
          }
        }
        const Matrix W{dt, N, K, w.data()};
        std::vector<float> want(static_cast<size_t>(M * N)), got(want.size());
        matmul_with(KernelPath::Scalar, x.data(), M, W, want.data(), pool);
        matmul_with(path, x.data(), M, W, got.data(), pool);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
            << label(path, dt, M, N, K) << " fill " << static_cast<int>(fill);
      }
  }
}

// A row's output does not depend on the rows batched with it (verify trees, other sequences).
TEST(QuantMatmul, BatchInvariantBitForBit) {
  std::mt19937 rng(4);
  ThreadPool pool(2);
  for (KernelPath path : kAllPaths) {
    if (!runs_on_this_cpu(path)) continue;
    for (DType dt : kBlockTypes) {
      const int64_t K = 3 * 256, N = 70, M = 67;
      const auto w = random_blocks(dt, N, K, rng);
      const Matrix W{dt, N, K, w.data()};
      const auto x = quant_random_vec(static_cast<size_t>(M * K), rng);
      std::vector<float> all(static_cast<size_t>(M * N)), one(static_cast<size_t>(N));
      matmul_with(path, x.data(), M, W, all.data(), pool);
      for (int64_t m : {int64_t{0}, int64_t{5}, int64_t{63}, int64_t{66}}) {
        matmul_with(path, x.data() + m * K, 1, W, one.data(), pool);
        ASSERT_EQ(0, std::memcmp(one.data(), all.data() + m * N, static_cast<size_t>(N) * 4))
            << label(path, dt, M, N, K) << " row " << m;
      }
    }
  }
}

// q/k/v of a Q4_K_M file: Q4_K and Q6_K in one fused call, plus a Q8_0 and an F32 matrix in the
// same call (other activation formats): each output equals its matrix alone.
TEST(QuantMatmul, MixedDtypesInOneCallEqualSeparateCalls) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  const int64_t K = 512, M = 6;
  const auto a = random_blocks(DType::Q4_K, 40, K, rng), b = random_blocks(DType::Q6_K, 24, K, rng);
  const auto c = random_blocks(DType::Q8_0, 16, K, rng);
  const auto f = quant_random_vec(static_cast<size_t>(8 * K), rng);
  const Matrix A{DType::Q4_K, 40, K, a.data()}, B{DType::Q6_K, 24, K, b.data()};
  const Matrix C{DType::Q8_0, 16, K, c.data()}, F{DType::F32, 8, K, f.data()};
  const auto x = quant_random_vec(static_cast<size_t>(M * K), rng);
  for (KernelPath path : kAllPaths) {
    if (!runs_on_this_cpu(path)) continue;
    std::vector<float> ya(M * 40), yb(M * 24), yc(M * 16), yf(M * 8);
    matmul_multi_with(path, x.data(), M,
                      {{&A, ya.data()}, {&F, yf.data()}, {&B, yb.data()}, {&C, yc.data()}}, pool);
    for (auto [W, y] :
         {std::pair{&A, &ya}, std::pair{&B, &yb}, std::pair{&C, &yc}, std::pair{&F, &yf}}) {
      std::vector<float> alone(y->size());
      matmul_with(path, x.data(), M, *W, alone.data(), pool);
      EXPECT_EQ(0, std::memcmp(alone.data(), y->data(), alone.size() * 4))
          << kernel_path_name(path) << " " << dtype_name(W->dtype);
    }
  }
}

// MatrixLayout::kRowGroups16 (core/tensor.h): the same rows come back out of it, and every path
// computes the row layout's bits from it, at decode, verify and prefill sizes.
TEST(QuantMatmul, GroupedRowsGiveTheRowLayoutsBits) {
  std::mt19937 rng(6);
  for (DType dt : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K}) {
    const int64_t N = 48, K = 11 * dtype_block_elements(dt);
    const auto rows = random_blocks(dt, N, K, rng);
    std::vector<unsigned char> grouped = rows;
    Matrix G{dt, N, K, grouped.data()};
    ASSERT_TRUE(can_group_rows16(G));
    group_rows16(G, grouped.data());
    EXPECT_EQ(G.layout, MatrixLayout::kRowGroups16);
    EXPECT_NE(grouped, rows);
    const size_t rb = dtype_bytes(dt, K);
    std::vector<unsigned char> back(rb);
    for (int64_t r = 0; r < N; ++r) {
      row_blocks(G, r, back.data());
      ASSERT_EQ(0, std::memcmp(back.data(), rows.data() + static_cast<size_t>(r) * rb, rb))
          << dtype_name(dt) << " row " << r;
    }
    const Matrix R{dt, N, K, rows.data()};
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      for (int64_t M : {1, 3, 8, 17, 70}) {
        const auto x = quant_random_vec(static_cast<size_t>(M * K), rng, 2.0f);
        std::vector<float> want(static_cast<size_t>(M * N)), got(want.size());
        matmul_with(KernelPath::Scalar, x.data(), M, R, want.data(), pool);
        for (KernelPath path : kAllPaths) {
          if (!runs_on_this_cpu(path)) continue;
          std::fill(got.begin(), got.end(), 0.0f);
          matmul_with(path, x.data(), M, G, got.data(), pool);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
              << label(path, dt, M, N, K) << " grouped, threads " << threads;
        }
      }
    }
  }
  // Only Q8_0/Q4_0/Q4_K/Q6_K with whole groups of sixteen rows.
  std::vector<unsigned char> w(dtype_bytes(DType::Q6_K, 256) * 17);
  EXPECT_FALSE(can_group_rows16(Matrix{DType::Q8_0, 17, 64, w.data()}));
  EXPECT_FALSE(can_group_rows16(Matrix{DType::Q6_K, 17, 256, w.data()}));
  EXPECT_TRUE(can_group_rows16(Matrix{DType::Q6_K, 16, 256, w.data()}));
  EXPECT_FALSE(can_group_rows16(Matrix{DType::Q5_K, 16, 256, w.data()}));
  Matrix odd{DType::Q8_0, 17, 64, w.data()};
  EXPECT_THROW(group_rows16(odd, w.data()), Error);
}

TEST(QuantMatmul, RowsThatAreNotWholeBlocksAreAnError) {
  ThreadPool pool(1);
  std::vector<unsigned char> w(64);
  std::vector<float> x(48), y(1);
  EXPECT_THROW(matmul(x.data(), 1, Matrix{DType::Q8_0, 1, 48, w.data()}, y.data(), pool), Error);
}

}  // namespace
}  // namespace eagle2
