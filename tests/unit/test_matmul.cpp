// Matmul: every SIMD path against a double-precision reference and the scalar path, on odd shapes
// and all weight dtypes; and batch invariance, bit for bit, across batch sizes, batch company,
// thread counts and tile shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

namespace eagle2 {
namespace {

const KernelPath kAllPaths[] = {KernelPath::Scalar, KernelPath::Avx2, KernelPath::Avx512};
const DType kAllDtypes[] = {DType::F32, DType::F16, DType::BF16};

// A weight matrix stored in `dtype`, plus its exact f32 values for the reference.
struct TestMatrix {
  DType dtype;
  int64_t rows, cols;
  std::vector<uint16_t> half;
  std::vector<float> f32;  // the stored values widened (exact)

  Matrix view() const {
    Matrix m;
    m.dtype = dtype;
    m.rows = rows;
    m.cols = cols;
    m.data = dtype == DType::F32 ? static_cast<const void*>(f32.data()) : half.data();
    return m;
  }
};

TestMatrix random_matrix(DType dt, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  TestMatrix m{dt, rows, cols, {}, {}};
  m.f32.resize(static_cast<size_t>(rows * cols));
  if (dt != DType::F32) m.half.resize(m.f32.size());
  for (size_t i = 0; i < m.f32.size(); ++i) {
    const float v = u(rng);
    if (dt == DType::F32) {
      m.f32[i] = v;
    } else if (dt == DType::F16) {
      m.half[i] = f32_to_f16(v);
      m.f32[i] = f16_to_f32(m.half[i]);
    } else {
      m.half[i] = f32_to_bf16(v);
      m.f32[i] = bf16_to_f32(m.half[i]);
    }
  }
  return m;
}

std::vector<float> random_vec(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

std::string label(KernelPath p, DType dt, int64_t M, int64_t N, int64_t K) {
  return std::string(kernel_path_name(p)) + " " + dtype_name(dt) + " M=" + std::to_string(M) +
         " N=" + std::to_string(N) + " K=" + std::to_string(K);
}

TEST(Matmul, MatchesDoubleReferenceOnOddShapes) {
  struct Shape {
    int64_t M, N, K;
  };
  const Shape shapes[] = {{1, 1, 1},      {1, 3, 17},    {2, 17, 3},    {3, 33, 33},
                          {4, 8, 16},     {5, 255, 257}, {7, 257, 255}, {1, 1000, 33},
                          {13, 31, 1000}, {70, 17, 257}, {33, 64, 64},  {64, 9, 15},
                          {9, 100, 2},    {1, 7, 1031},  {6, 1, 300}};
  std::mt19937 rng(1234);
  ThreadPool pool(2);
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    for (DType dt : kAllDtypes) {
      for (const Shape& s : shapes) {
        const TestMatrix W = random_matrix(dt, s.N, s.K, rng);
        const std::vector<float> x = random_vec(static_cast<size_t>(s.M * s.K), rng);
        std::vector<float> y(static_cast<size_t>(s.M * s.N), NAN), y_ref(y.size(), NAN);
        matmul_with(path, x.data(), s.M, W.view(), y.data(), pool);
        matmul_with(KernelPath::Scalar, x.data(), s.M, W.view(), y_ref.data(), pool);
        const double tol = 1e-5 * std::sqrt(static_cast<double>(s.K)) + 1e-6;
        for (int64_t m = 0; m < s.M; ++m) {
          for (int64_t n = 0; n < s.N; ++n) {
            double ref = 0;
            // bf16 weights multiply bf16-rounded activations (kernels/matmul.h).
            for (int64_t k = 0; k < s.K; ++k)
              ref +=
                  static_cast<double>(dt == DType::BF16 ? bf16_to_f32(f32_to_bf16(x[m * s.K + k]))
                                                        : x[m * s.K + k]) *
                  W.f32[n * s.K + k];
            const float got = y[m * s.N + n];
            ASSERT_NEAR(got, ref, tol) << label(path, dt, s.M, s.N, s.K) << " at " << m << "," << n;
            ASSERT_NEAR(got, y_ref[m * s.N + n], tol)
                << label(path, dt, s.M, s.N, s.K) << " vs scalar at " << m << "," << n;
          }
        }
      }
    }
  }
}

TEST(Matmul, ReportsSkippedPaths) {
  std::string missing;
  for (KernelPath p : kAllPaths)
    if (!cpu_supports(p)) missing += std::string(" ") + kernel_path_name(p);
  if (!missing.empty()) GTEST_SKIP() << "this CPU lacks kernel path(s):" << missing;
}

// The heart of batch invariance: a row's outputs are the same bits whether it is computed alone
// or in any batch, at any position, with any company, on any number of threads.
TEST(Matmul, BatchInvariantBitForBit) {
  struct Shape {
    int64_t N, K;
  };
  // K = 1031 puts 16-bit weight rows past the AVX2 path's short-row limit (2 KB), so its 3-8-row
  // groups take the wide tiles there and the one-column tiles below it.
  const Shape shapes[] = {{37, 257}, {67, 1000}, {37, 1031}, {8, 16}, {13, 5}};
  const int64_t kRows = 80;  // candidate rows; batches draw from them
  std::mt19937 rng(99);
  ThreadPool pool1(1), pool2(2), pool3(3);
  ThreadPool* pools[] = {&pool1, &pool2, &pool3};
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    for (DType dt : kAllDtypes) {
      for (const Shape& s : shapes) {
        const TestMatrix W = random_matrix(dt, s.N, s.K, rng);
        // Rows of widely different magnitudes, so that any change of order would show.
        std::vector<float> rows(static_cast<size_t>(kRows * s.K));
        for (int64_t r = 0; r < kRows; ++r) {
          const float scale = std::ldexp(1.0f, static_cast<int>(r % 9) - 4);
          const auto v = random_vec(static_cast<size_t>(s.K), rng, scale);
          std::copy(v.begin(), v.end(), rows.begin() + r * s.K);
        }
        std::vector<float> alone(static_cast<size_t>(kRows * s.N));
        for (int64_t r = 0; r < kRows; ++r)
          matmul_with(path, rows.data() + r * s.K, 1, W.view(), alone.data() + r * s.N, pool1);

        for (int64_t M : {2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33, 64, 70}) {
          for (int trial = 0; trial < 2; ++trial) {
            std::vector<int64_t> pick(static_cast<size_t>(M));
            std::vector<float> x(static_cast<size_t>(M * s.K));
            for (int64_t m = 0; m < M; ++m) {
              pick[m] = static_cast<int64_t>(rng() % kRows);
              std::memcpy(&x[m * s.K], &rows[pick[m] * s.K], static_cast<size_t>(s.K) * 4);
            }
            ThreadPool& pool = *pools[(M + trial) % 3];
            std::vector<float> y(static_cast<size_t>(M * s.N));
            matmul_with(path, x.data(), M, W.view(), y.data(), pool);
            for (int64_t m = 0; m < M; ++m) {
              ASSERT_EQ(
                  0, std::memcmp(&y[m * s.N], &alone[pick[m] * s.N], static_cast<size_t>(s.N) * 4))
                  << label(path, dt, M, s.N, s.K) << " row " << m << " threads " << pool.size()
                  << ": differs from the same row computed alone";
            }
          }
        }
      }
    }
  }
}

TEST(Matmul, ThreadCountDoesNotChangeBits) {
  std::mt19937 rng(7);
  ThreadPool pool1(1), pool2(2), pool3(3);
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    for (DType dt : kAllDtypes) {
      const int64_t M = 19, N = 301, K = 130;
      const TestMatrix W = random_matrix(dt, N, K, rng);
      const auto x = random_vec(static_cast<size_t>(M * K), rng);
      std::vector<float> y1(static_cast<size_t>(M * N)), y2(y1.size()), y3(y1.size());
      matmul_with(path, x.data(), M, W.view(), y1.data(), pool1);
      matmul_with(path, x.data(), M, W.view(), y2.data(), pool2);
      matmul_with(path, x.data(), M, W.view(), y3.data(), pool3);
      EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * 4)) << label(path, dt, M, N, K);
      EXPECT_EQ(0, std::memcmp(y1.data(), y3.data(), y1.size() * 4)) << label(path, dt, M, N, K);
    }
  }
}

// Attention relies on dot_f32 following the same order as a 1x1 f32 matmul of its path.
TEST(Matmul, DotF32MatchesOneByOneMatmul) {
  std::mt19937 rng(5);
  ThreadPool pool(1);
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    for (int64_t n : {1, 2, 7, 8, 15, 16, 17, 64, 127, 128, 129, 1000}) {
      const auto a = random_vec(static_cast<size_t>(n), rng);
      const TestMatrix b = random_matrix(DType::F32, 1, n, rng);
      float y = NAN;
      matmul_with(path, a.data(), 1, b.view(), &y, pool);
      const float d = dot_f32(path, a.data(), b.f32.data(), n);
      EXPECT_EQ(0, std::memcmp(&y, &d, 4)) << kernel_path_name(path) << " n=" << n;
      double ref = 0;
      for (int64_t k = 0; k < n; ++k) ref += static_cast<double>(a[k]) * b.f32[k];
      EXPECT_NEAR(d, ref, 1e-5 * std::sqrt(static_cast<double>(n)) + 1e-6);
    }
  }
}

TEST(Matmul, EmptyShapes) {
  ThreadPool pool(2);
  std::vector<float> w(6, 1.0f), x(6, 1.0f), y(6, 5.0f);
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    Matrix W{DType::F32, 3, 0, w.data()};
    matmul_with(path, x.data(), 2, W, y.data(), pool);  // K = 0: zeros
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], 0.0f);
    Matrix W0{DType::F32, 0, 2, w.data()};
    matmul_with(path, x.data(), 2, W0, y.data(), pool);  // N = 0: nothing to do
    matmul_with(path, x.data(), 0, W, y.data(), pool);   // M = 0
  }
}

// matmul_multi hands all matrices' tasks out at once; every output must keep the bits of a
// matmul of its matrix alone, on every path and dtype, and with a matrix of no rows among them.
TEST(Matmul, MultiEqualsSeparateCallsBitForBit) {
  std::mt19937 rng(21);
  ThreadPool pool(3);
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    for (DType dt : kAllDtypes) {
      for (int64_t M : {1, 5, 70}) {
        const int64_t K = 45;
        const TestMatrix a = random_matrix(dt, 37, K, rng), b = random_matrix(dt, 0, K, rng),
                         c = random_matrix(dt, 130, K, rng);
        const auto x = random_vec(static_cast<size_t>(M * K), rng);
        const Matrix va = a.view(), vb = b.view(), vc = c.view();
        std::vector<float> ya(static_cast<size_t>(M * 37)), yc(static_cast<size_t>(M * 130));
        std::vector<float> wa(ya.size()), wc(yc.size());
        matmul_multi_with(path, x.data(), M, {{&va, ya.data()}, {&vb, nullptr}, {&vc, yc.data()}},
                          pool);
        matmul_with(path, x.data(), M, va, wa.data(), pool);
        matmul_with(path, x.data(), M, vc, wc.data(), pool);
        EXPECT_EQ(0, std::memcmp(ya.data(), wa.data(), ya.size() * 4))
            << kernel_path_name(path) << " M=" << M;
        EXPECT_EQ(0, std::memcmp(yc.data(), wc.data(), yc.size() * 4))
            << kernel_path_name(path) << " M=" << M;
      }
    }
  }
}

TEST(Matmul, MultiRejectsMixedShapes) {
  ThreadPool pool(1);
  std::vector<float> w(12, 1.0f), x(4, 1.0f), y(12);
  const Matrix a{DType::F32, 3, 4, w.data()}, b{DType::F32, 4, 3, w.data()};
  try {
    matmul_multi(x.data(), 1, {{&a, y.data()}, {&b, y.data()}}, pool);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must share K"), std::string::npos) << e.what();
  }
}

// In the sanitizer build the SIMD matmul kernels are compiled without ASan (for speed) and their
// caller checks each call's regions whole (kernels/sanitizer_regions.h): a buffer one element too
// short, for the activations, the weights or the output, must still be reported on every path.
TEST(MatmulSanitizer, ABufferOneElementShortIsReportedOnEveryPath) {
#if !defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "runs in the AddressSanitizer build (the sanitizer pass of scripts/test.sh)";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::mt19937 rng(11);
  const int64_t M = 5, K = 40, N = 9;
  for (KernelPath path : kAllPaths) {
    if (!cpu_supports(path)) continue;
    for (DType dt : {DType::F32, DType::BF16}) {
      SCOPED_TRACE(std::string(kernel_path_name(path)) + " " + dtype_name(dt));
      ThreadPool pool(1);
      const TestMatrix W = random_matrix(dt, N, K, rng);
      const TestMatrix W_short = random_matrix(dt, N - 1, K, rng);
      Matrix w_short = W_short.view();
      w_short.rows = N;  // claims one row more than it holds
      auto run = [&](size_t x_size, const Matrix& w, size_t y_size) {
        std::vector<float> x(x_size, 0.5f), y(y_size);
        matmul_with(path, x.data(), M, w, y.data(), pool);
      };
      const size_t xs = static_cast<size_t>(M * K), ys = static_cast<size_t>(M * N);
      EXPECT_DEATH(run(xs - 1, W.view(), ys), "AddressSanitizer");
      EXPECT_DEATH(run(xs, w_short, ys), "AddressSanitizer");
      EXPECT_DEATH(run(xs, W.view(), ys - 1), "AddressSanitizer");
    }
  }
#endif
}

TEST(KernelPath, OverrideParsing) {
  EXPECT_EQ(kernel_path_from_override(nullptr), best_kernel_path());
  EXPECT_EQ(kernel_path_from_override(""), best_kernel_path());
  EXPECT_EQ(kernel_path_from_override("scalar"), KernelPath::Scalar);
  EXPECT_THROW(kernel_path_from_override("sse9"), Error);
  EXPECT_THROW(kernel_path_from_override("AVX2"), Error);
  for (KernelPath p : kAllPaths) {
    if (cpu_supports(p)) {
      EXPECT_EQ(kernel_path_from_override(kernel_path_name(p)), p);
    } else {
      EXPECT_THROW(kernel_path_from_override(kernel_path_name(p)), Error);
    }
  }
  EXPECT_TRUE(cpu_supports(KernelPath::Scalar));
  EXPECT_TRUE(cpu_supports(best_kernel_path()));
  try {
    kernel_path_from_override("bogus");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bogus"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace eagle2
