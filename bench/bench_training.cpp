// Training micro-benchmarks: the attention of a head's training step, forward plus backward, at
// the shape the bundled heads train with (4 windows of 256 positions, 8 query heads over 4 kv
// heads of 64). BM_CausalAttention is the EAGLE head's layer (train/attention.h);
// BM_TttAttention/S is step S of EAGLE-3's training-time test (train/ttt_attention.h), which an
// S+1-step unrolled head runs for S = 0..S.
//
//   build/bin/bench_training
// Threads: EAGLE2_BENCH_THREADS, default default_thread_count().
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bench_pool.h"
#include "core/thread_pool.h"
#include "train/attention.h"
#include "train/ttt_attention.h"

namespace eagle2 {
namespace {

constexpr train::AttentionShape kShape{4, 256, 8, 4, 64};

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

int64_t q_elems() {
  return kShape.batch * kShape.seq_len * kShape.n_heads * kShape.head_dim;
}
int64_t kv_elems() {
  return kShape.batch * kShape.seq_len * kShape.n_kv_heads * kShape.head_dim;
}

void BM_CausalAttention(benchmark::State& state) {
  const int64_t T = kShape.seq_len;
  auto q = random_floats(q_elems(), 1), k = random_floats(kv_elems(), 2),
       v = random_floats(kv_elems(), 3), dout = random_floats(q_elems(), 4);
  std::vector<float> out(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
  std::vector<float> probs(static_cast<size_t>(kShape.batch * kShape.n_heads * T * T));
  for (auto _ : state) {
    train::attention_forward(out.data(), probs.data(), q.data(), k.data(), v.data(), kShape,
                             bench_pool());
    train::attention_backward(dq.data(), dk.data(), dv.data(), dout.data(), q.data(), k.data(),
                              v.data(), probs.data(), kShape, bench_pool());
    benchmark::DoNotOptimize(dq.data());
  }
}
BENCHMARK(BM_CausalAttention)->Unit(benchmark::kMillisecond);

void BM_TttAttention(benchmark::State& state) {
  const int64_t S = state.range(0), T = kShape.seq_len;
  auto q = random_floats(q_elems(), 1), dout = random_floats(q_elems(), 4);
  std::vector<std::vector<float>> k, v, dk, dv;
  for (int64_t u = 0; u <= S; ++u) {
    k.push_back(random_floats(kv_elems(), static_cast<uint32_t>(10 + u)));
    v.push_back(random_floats(kv_elems(), static_cast<uint32_t>(20 + u)));
    dk.emplace_back(static_cast<size_t>(kv_elems()));
    dv.emplace_back(static_cast<size_t>(kv_elems()));
  }
  std::vector<const float*> kp, vp;
  std::vector<float*> dkp, dvp;
  for (int64_t u = 0; u <= S; ++u) {
    kp.push_back(k[u].data());
    vp.push_back(v[u].data());
    dkp.push_back(dk[u].data());
    dvp.push_back(dv[u].data());
  }
  std::vector<float> out(q.size()), dq(q.size());
  std::vector<float> probs(static_cast<size_t>(kShape.batch * kShape.n_heads * T * (T + S)));
  for (auto _ : state) {
    train::ttt_attention_forward(out.data(), probs.data(), q.data(), kp, vp, kShape, bench_pool());
    train::ttt_attention_backward(dq.data(), dkp, dvp, dout.data(), q.data(), kp, vp, probs.data(),
                                  kShape, bench_pool());
    benchmark::DoNotOptimize(dq.data());
  }
}
BENCHMARK(BM_TttAttention)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace eagle2

BENCHMARK_MAIN();
