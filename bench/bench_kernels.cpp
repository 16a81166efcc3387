// Kernel micro-benchmarks: the matmul cost curve over batch rows M (the quantity that decides how
// large a verify tree may be, DESIGN "The performance model of a CPU") and the memory read
// bandwidth that bounds decoding.
//
//   build/bin/bench_kernels --benchmark_filter=Matmul
// Weights are cycled through copies totalling > L3, so they come from DRAM as in a real model.
// Counters: weight_bytes/s (bytes of W read per second, compare with read bandwidth) and
// GFLOP/s (2*M*N*K per second). Threads: EAGLE2_BENCH_THREADS, default default_thread_count().
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_pool.h"
#include "core/dtype.h"
#include "core/quant_blocks.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "kernels/bandwidth.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

namespace eagle2 {
namespace {

// Enough copies of the matrix to exceed the 32 MB L3, cycled through, so that every call streams
// its weights from DRAM as a decoding step does (a single small matrix would stay in L3 and make
// M=1 look faster than it is inside a real model).
constexpr size_t kColdBytes = size_t{64} << 20;

struct Weights {
  std::vector<float> f32;
  std::vector<uint16_t> half;
  std::vector<unsigned char> blocks;  // quantized types: random codes, f16 scales set below
  std::vector<Matrix> copies;
};

// Weights live for the whole run (generating a 4096x11008 matrix takes a while): one entry per
// (dtype, N, K, grouped), made on first use.
Weights& cache_entry(DType dt, int64_t N, int64_t K, bool grouped, bool* fresh) {
  static std::map<std::tuple<int, int64_t, int64_t, bool>, std::unique_ptr<Weights>> cache;
  std::unique_ptr<Weights>& slot = cache[std::make_tuple(static_cast<int>(dt), N, K, grouped)];
  *fresh = slot == nullptr;
  if (*fresh) slot = std::make_unique<Weights>();
  return *slot;
}

const Weights& weights(DType dt, int64_t N, int64_t K) {
  bool fresh;
  Weights& w = cache_entry(dt, N, K, false, &fresh);
  if (!fresh) return w;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const size_t n = static_cast<size_t>(N * K);
  const size_t bytes = dtype_bytes(dt, static_cast<int64_t>(n));
  const size_t n_copies = std::max<size_t>(1, (kColdBytes + bytes - 1) / bytes);
  if (is_block_dtype(dt)) {
    // Quantize random rows once, then repeat them: the kernels' cost does not depend on values.
    std::vector<float> row(static_cast<size_t>(K));
    w.blocks.resize(bytes * n_copies);
    const size_t row_bytes = dtype_bytes(dt, K);
    const DType q = dt == DType::Q8_0 ? DType::Q8_0 : DType::Q4_0;  // the types eagle2 writes
    for (int64_t r = 0; r < N; ++r) {
      for (auto& v : row) v = u(rng);
      if (dt == q) {
        quantize_blocks(q, row.data(), w.blocks.data() + static_cast<size_t>(r) * row_bytes, K);
      } else {  // K-quants: random codes with a small f16 scale in every block
        for (size_t i = 0; i < row_bytes; ++i)
          w.blocks[static_cast<size_t>(r) * row_bytes + i] = static_cast<unsigned char>(rng());
        const size_t d_at = dt == DType::Q6_K   ? 208
                            : dt == DType::Q3_K ? 108
                            : dt == DType::Q2_K ? 80
                                                : 0;
        for (size_t b = 0; b < row_bytes / dtype_block_bytes(dt); ++b) {
          const uint16_t h = f32_to_f16(0.01f);
          std::memcpy(w.blocks.data() + static_cast<size_t>(r) * row_bytes +
                          b * dtype_block_bytes(dt) + d_at,
                      &h, 2);
          // The second f16 (dmin, or Q4_1/Q5_1's m) where the type has one.
          if (dt == DType::Q4_K || dt == DType::Q5_K || dt == DType::Q4_1 || dt == DType::Q5_1 ||
              dt == DType::Q2_K)
            std::memcpy(w.blocks.data() + static_cast<size_t>(r) * row_bytes +
                            b * dtype_block_bytes(dt) + d_at + 2,
                        &h, 2);
        }
      }
    }
    for (size_t c = 1; c < n_copies; ++c)
      std::copy_n(w.blocks.data(), bytes, w.blocks.data() + c * bytes);
  } else if (dt == DType::F32) {
    w.f32.resize(n * n_copies);
    for (auto& v : w.f32) v = u(rng);
  } else {
    w.half.resize(n * n_copies);
    for (auto& v : w.half) v = dt == DType::BF16 ? f32_to_bf16(u(rng)) : f32_to_f16(u(rng));
  }
  for (size_t c = 0; c < n_copies; ++c) {
    Matrix m;
    m.dtype = dt;
    m.rows = N;
    m.cols = K;
    m.data = is_block_dtype(dt) ? static_cast<const void*>(w.blocks.data() + c * bytes)
             : dt == DType::F32 ? static_cast<const void*>(w.f32.data() + c * n)
                                : w.half.data() + c * n;
    w.copies.push_back(m);
  }
  return w;
}

// The same weights with every copy in MatrixLayout::kRowGroups16 (a copy of its own: the
// row-layout copies stay for the other benchmarks).
const Weights& grouped_weights(DType dt, int64_t N, int64_t K) {
  bool fresh;
  Weights& w = cache_entry(dt, N, K, true, &fresh);
  if (!fresh) return w;
  const Weights& rows = weights(dt, N, K);
  w.blocks = rows.blocks;
  const size_t bytes = dtype_bytes(dt, N * K);
  for (size_t c = 0; c < rows.copies.size(); ++c) {
    Matrix m = rows.copies[c];
    m.data = w.blocks.data() + c * bytes;
    group_rows16(m, w.blocks.data() + c * bytes);
    w.copies.push_back(m);
  }
  return w;
}

// args: M, N, K, dtype (0 f32, 1 f16, 2 bf16, 3 q8_0, 4 q4_0, 5 q4_k, 6 q6_k; 7 q8_0 and 8 q4_0 in
// MatrixLayout::kRowGroups16, as the model loader leaves them for the AVX-512 VNNI path; 9 q4_1,
// 10 q5_0, 11 q5_1, 12 q5_k, 13 q3_k, 14 q2_k, 15 iq4_nl, 16 iq4_xs: DType's value + 2)
void BM_Matmul(benchmark::State& state) {
  const int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  const bool grouped = state.range(3) == 7 || state.range(3) == 8;
  const DType dt =
      grouped ? (state.range(3) == 7 ? DType::Q8_0 : DType::Q4_0)
              : static_cast<DType>(state.range(3) < 9 ? state.range(3) : state.range(3) - 2);
  const Weights& w = grouped ? grouped_weights(dt, N, K) : weights(dt, N, K);
  std::vector<float> x(static_cast<size_t>(M * K), 0.5f), y(static_cast<size_t>(M * N));
  ThreadPool& pool = bench_pool();
  const KernelPath path = active_kernel_path();
  size_t copy = 0;
  for (auto _ : state) {
    matmul_with(path, x.data(), M, w.copies[copy], y.data(), pool);
    copy = copy + 1 == w.copies.size() ? 0 : copy + 1;
    benchmark::ClobberMemory();
  }
  const double iters = static_cast<double>(state.iterations());
  state.counters["weight_bytes/s"] =
      benchmark::Counter(iters * static_cast<double>(dtype_bytes(dt, N * K)),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.counters["GFLOP/s"] =
      benchmark::Counter(iters * 2.0 * M * N * K / 1e9, benchmark::Counter::kIsRate);
  state.SetLabel(std::string(kernel_path_name(path)) + " " + dtype_name(dt) +
                 " threads=" + std::to_string(pool.size()));
}

void matmul_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "N", "K", "dtype"});
  for (int dt : {2, 0})
    for (int64_t M : {1, 2, 4, 8, 16, 32, 64}) b->Args({M, 2048, 2048, dt});
  // A LLaMA-7B MLP shape (gate/up: 11008 x 4096), 90 MB in bf16: far beyond the L3.
  for (int64_t M : {1, 4, 16, 64}) b->Args({M, 11008, 4096, 2});
  // Around the AVX2 path's short-row limit for one-column tiles (matmul_avx2.cpp: 2 KB of bf16).
  for (int64_t M : {1, 4, 6})
    for (int64_t K : {1024, 1536}) b->Args({M, 4096, K, 2});
  // Training shapes (train-lm on the bundled model: 8 x 256 tokens, hidden 512, MLP 768): the
  // compute-bound regime where bf16 pairs (vdpbf16ps) can double the f32 rate.
  for (int dt : {0, 2}) b->Args({2048, 768, 512, dt});
  // The bundled code model's decode/verify shapes (hidden 512, MLP 768, vocab 4096; bf16): small
  // matrices where the weight streams are short and per-call overheads show.
  for (int64_t M : {1, 2, 3, 4, 5, 6, 7, 8, 16})
    for (auto [N, K] : {std::pair<int64_t, int64_t>{512, 512}, {768, 512}, {512, 768}, {4096, 512}})
      b->Args({M, N, K, 2});
  // Quantized weights (GGUF files): the same square shape and the bundled model's shapes.
  for (int dt : {3, 4, 5, 6, 7, 8})
    for (int64_t M : {1, 4, 8, 16, 64}) b->Args({M, 2048, 2048, dt});
  // Issue 42's types against Q4_K / Q4_0 above.
  for (int dt : {9, 10, 11, 12, 13, 14, 15, 16})
    for (int64_t M : {1, 4, 8, 16, 64}) b->Args({M, 2048, 2048, dt});
  for (int dt : {3, 4, 5, 6})
    for (int64_t M : {1, 4})
      for (auto [N, K] : {std::pair<int64_t, int64_t>{768, 512}, {4096, 512}})
        b->Args({M, N, K, dt});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}
BENCHMARK(BM_Matmul)->Apply(matmul_args);

// Threads read a 512 MiB buffer; compare matmul's weight_bytes/s for M=1 with this.
void BM_ReadBandwidth(benchmark::State& state) {
  double gbs = 0;
  for (auto _ : state)
    gbs = measure_read_bandwidth_gbs(bench_pool(), static_cast<size_t>(state.range(0)) << 20);
  state.counters["GB/s"] = gbs;
}
BENCHMARK(BM_ReadBandwidth)->Arg(512)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace eagle2

BENCHMARK_MAIN();
