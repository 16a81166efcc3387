// The quantized kernels' many-row tiles (verification batches, prompts) against the reference bit
// for bit: every block type, every SIMD path the CPU has, every batch size 1..64, each batch cut
// from a different place of a pool of rows (so every row is seen in many companies), on 1, 2 and
// 3 threads (different column splits, so whole and partial groups of sixteen columns). Each row's
// output must be the reference's whatever rows share the call (quant_matmul.h's contract), which
// is what keeps greedy speculation on a quantized file bit-exact to plain decoding.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/quant_blocks.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "support/quant_blocks_random.h"

namespace eagle2 {
namespace {

using test::random_blocks;

const char* path_skip_note(KernelPath p) {
  return p == KernelPath::Avx512 ? "skipped: no AVX-512 (VNNI) on this CPU"
                                 : "skipped: no AVX2 on this CPU";
}

// The paths to test; prints the ones this CPU lacks.
std::vector<KernelPath> simd_paths() {
  std::vector<KernelPath> paths;
  for (KernelPath p : {KernelPath::Avx2, KernelPath::Avx512}) {
    if (cpu_supports(p) && (p != KernelPath::Avx512 || cpu_has_avx512_vnni()))
      paths.push_back(p);
    else
      std::printf("%s: %s\n", kernel_path_name(p), path_skip_note(p));
  }
  return paths;
}

struct Case {
  DType dt;
  int64_t K;
};

TEST(QuantTiles, EveryBatchOf1To64RowsInAnyCompanyGivesTheReferenceBits) {
  std::mt19937 rng(41);
  // 45 columns: two groups of sixteen and a part group of thirteen, which is not a whole number
  // of the AVX2 kernels' eight-column groups either (a tail of five).
  const int64_t kPool = 80, N = 45;
  // Row lengths: for the K-quants one superblock and nine (acc[i % 8] wraps); for Q8_0/Q4_0
  // three blocks and nineteen.
  const Case cases[] = {{DType::Q4_K, 256},
                        {DType::Q4_K, 9 * 256},
                        {DType::Q6_K, 256},
                        {DType::Q6_K, 9 * 256},
                        {DType::Q8_0, 3 * 32},
                        {DType::Q8_0, 19 * 32},
                        {DType::Q4_0, 3 * 32},
                        {DType::Q4_0, 19 * 32},
                        // The types of core/quant_codes.h: one length each, past eight blocks.
                        {DType::Q4_1, 9 * 32},
                        {DType::Q5_0, 9 * 32},
                        {DType::Q5_1, 9 * 32},
                        {DType::IQ4_NL, 9 * 32},
                        {DType::Q5_K, 9 * 256},
                        {DType::Q3_K, 9 * 256},
                        {DType::Q2_K, 9 * 256},
                        {DType::IQ4_XS, 9 * 256}};
  const std::vector<KernelPath> paths = simd_paths();
  for (const Case& c : cases) {
    const auto w = random_blocks(c.dt, N, c.K, rng);
    const Matrix W{c.dt, N, c.K, w.data()};
    std::vector<float> x(static_cast<size_t>(kPool * c.K));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& v : x) v = normal(rng);
    // The reference, all rows at once: its rows are independent by construction.
    ThreadPool one(1);
    std::vector<float> want(static_cast<size_t>(kPool * N));
    matmul_with(KernelPath::Scalar, x.data(), kPool, W, want.data(), one);
    for (KernelPath path : paths)
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (int64_t M = 1; M <= 64; ++M) {
          const int64_t first =
              (M * 7 + threads) % (kPool - M + 1);  // a different company each time
          std::vector<float> got(static_cast<size_t>(M * N));
          matmul_with(path, x.data() + first * c.K, M, W, got.data(), pool);
          for (int64_t m = 0; m < M; ++m)
            ASSERT_EQ(0, std::memcmp(want.data() + (first + m) * N, got.data() + m * N,
                                     N * sizeof(float)))
                << kernel_path_name(path) << " " << dtype_name(c.dt) << " K=" << c.K << " M=" << M
                << " row " << first + m << " threads " << threads;
        }
      }
  }
}

// The same for Q8_0/Q4_0/Q4_K/Q6_K matrices in MatrixLayout::kRowGroups16, the layout the model
// loader gives them (and what the AVX-512 VNNI kernels read as it is; other paths de-interleave
// rows): 48 columns (three groups of sixteen, split between 1, 2 and 3 threads), every batch of
// 1..64 rows, against the reference on the row layout.
TEST(QuantTiles, GroupedRowsEveryBatchOf1To64RowsGivesTheReferenceBits) {
  std::mt19937 rng(43);
  const int64_t kPool = 80, N = 48;
  const Case cases[] = {{DType::Q8_0, 3 * 32},  {DType::Q8_0, 19 * 32}, {DType::Q4_0, 3 * 32},
                        {DType::Q4_0, 19 * 32}, {DType::Q4_K, 256},     {DType::Q4_K, 9 * 256},
                        {DType::Q6_K, 256},     {DType::Q6_K, 9 * 256}};
  const std::vector<KernelPath> paths = simd_paths();
  for (const Case& c : cases) {
    const auto w = random_blocks(c.dt, N, c.K, rng);
    const Matrix W{c.dt, N, c.K, w.data()};
    std::vector<unsigned char> grouped = w;
    Matrix G{c.dt, N, c.K, grouped.data()};
    ASSERT_TRUE(can_group_rows16(G));
    group_rows16(G, grouped.data());
    std::vector<float> x(static_cast<size_t>(kPool * c.K));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto& v : x) v = normal(rng);
    ThreadPool one(1);
    std::vector<float> want(static_cast<size_t>(kPool * N));
    matmul_with(KernelPath::Scalar, x.data(), kPool, W, want.data(), one);
    for (KernelPath path : paths)
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (int64_t M = 1; M <= 64; ++M) {
          const int64_t first = (M * 5 + threads) % (kPool - M + 1);
          std::vector<float> got(static_cast<size_t>(M * N));
          matmul_with(path, x.data() + first * c.K, M, G, got.data(), pool);
          for (int64_t m = 0; m < M; ++m)
            ASSERT_EQ(0, std::memcmp(want.data() + (first + m) * N, got.data() + m * N,
                                     N * sizeof(float)))
                << kernel_path_name(path) << " grouped " << dtype_name(c.dt) << " K=" << c.K
                << " M=" << M << " row " << first + m << " threads " << threads;
        }
      }
  }
}

// The whole prompt-sized case: more rows than one task's row block (64), several column tasks.
TEST(QuantTiles, PromptSizedBatchesGiveTheReferenceBits) {
  std::mt19937 rng(42);
  const int64_t M = 130, N = 72;
  for (DType dt : {DType::Q4_K, DType::Q6_K, DType::Q5_K, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                   DType::Q5_0, DType::Q5_1, DType::IQ4_NL}) {
    const bool k_quant = dt == DType::Q4_K || dt == DType::Q6_K || dt == DType::Q5_K;
    const int64_t K = k_quant ? 2 * 256 : 16 * 32;
    const auto w = random_blocks(dt, N, K, rng);
    const Matrix W{dt, N, K, w.data()};
    std::vector<float> x(static_cast<size_t>(M * K));
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (auto& v : x) v = u(rng);
    ThreadPool pool(2);
    std::vector<float> want(static_cast<size_t>(M * N)), got(want.size());
    matmul_with(KernelPath::Scalar, x.data(), M, W, want.data(), pool);
    for (KernelPath path : simd_paths()) {
      matmul_with(path, x.data(), M, W, got.data(), pool);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
          << kernel_path_name(path) << " " << dtype_name(dt);
    }
  }
}

}  // namespace
}  // namespace eagle2
