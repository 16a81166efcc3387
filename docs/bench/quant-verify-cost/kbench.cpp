// One quantized matmul kernel call (quant_matmul_range_avx512, or the kRowGroups16 kernel),
// single thread, timed in thread CPU time (best of 5 rounds of ITERS calls), so that other
// processes on a shared machine move the figure little. Built by kbench_build.sh.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/quant_blocks.h"
#include "core/tensor.h"
#include "kernels/quant_internal.h"
#include "kernels/quant_matmul.h"
using namespace eagle2;
static double tcpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char** argv) {
  int code = atoi(argv[1]);
  // 7-10: Q8_0, Q4_0, Q4_K, Q6_K in MatrixLayout::kRowGroups16, as the loader leaves them.
  bool grouped = code >= 7;
  const DType grouped_types[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K};
  DType dt = grouped ? grouped_types[code - 7] : static_cast<DType>(code);
  // Or a type's name (Q5_K, Q4_1, ...): that type in the row layout.
  if (argv[1][0] == 'Q' || argv[1][0] == 'I') {
    grouped = false;
    for (int t = static_cast<int>(DType::Q8_0); t <= static_cast<int>(DType::IQ4_XS); ++t)
      if (std::strcmp(dtype_name(static_cast<DType>(t)), argv[1]) == 0) dt = static_cast<DType>(t);
  }
  int64_t M = atoll(argv[2]), N = atoll(argv[3]), K = atoll(argv[4]);
  int iters = atoi(argv[5]);
  // A sixth argument "avx2": the AVX2 path's kernel instead (row layout only).
  const bool avx2 = argc > 6 && std::strcmp(argv[6], "avx2") == 0;
  std::mt19937 rng(1);
  std::vector<unsigned char> w(dtype_bytes(dt, K) * N);
  for (auto& b : w) b = rng() & 255;
  size_t bb = dtype_block_bytes(dt);
  for (size_t at = 0; at < w.size(); at += bb) {
    uint16_t h = f32_to_f16(0.01f);
    size_t off = dt == DType::Q6_K ? 208 : 0;
    memcpy(&w[at + off], &h, 2);
    if (dt == DType::Q4_K || dt == DType::Q5_K) memcpy(&w[at + 2], &h, 2);
  }
  if (grouped) {
    Matrix W{dt, N, K, w.data()};
    group_rows16(W, w.data());
  }
  std::vector<float> x(M * K);
  std::normal_distribution<float> nd;
  for (auto& v : x) v = nd(rng);
  QuantizedRows q;
  quantize_rows(dt, x.data(), M, K, &q, KernelPath::Scalar);
  detail::QuantRowsView v0{q.qs.data(), q.scale.data(), q.sums.data(), K, q.block, q.sum_group};
  std::vector<float> y(M * N);
  auto run = [&](float* y) {
    if (grouped && (dt == DType::Q4_K || dt == DType::Q6_K))
      detail::quant_kgrouped16_range_avx512(dt, v0, w.data(), y, N, 0, M, 0, N);
    else if (grouped)
      detail::quant_grouped16_range_avx512(dt, v0, w.data(), y, N, 0, M, 0, N);
    else if (avx2)
      detail::quant_matmul_range_avx2(dt, v0, w.data(), y, N, 0, M, 0, N);
    else
      detail::quant_matmul_range_avx512(dt, v0, w.data(), y, N, 0, M, 0, N);
  };
  for (int i = 0; i < 3; ++i) run(y.data());
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = tcpu();
    for (int i = 0; i < iters; ++i) run(y.data());
    double t = (tcpu() - t0) / iters;
    if (t < best) best = t;
  }
  double s = 0;
  for (float f : y) s += f;
  printf("%s M=%lld N=%lld K=%lld  %.1f us/call (best of 5, thread CPU)  %.2f us/row  chk %.4g\n",
         dtype_name(dt), (long long)M, (long long)N, (long long)K, best * 1e6, best * 1e6 / M, s);
}
