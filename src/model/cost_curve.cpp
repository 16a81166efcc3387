#include "model/cost_curve.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace eagle2 {

namespace {

// A deterministic pseudo-random token stream (a 64-bit LCG; the golden-ratio word is only its
// seed, this is not SplitMix64, and the ids need not match any other stream).
std::vector<int32_t> random_ids(int64_t n, int64_t vocab, uint64_t& state) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (auto& id : ids) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    id = static_cast<int32_t>((state >> 33) % static_cast<uint64_t>(vocab));
  }
  return ids;
}

// Runs ids causally into kv in chunks of 64 and commits them.
void fill_context(LlamaModel& model, KvCache& kv, const std::vector<int32_t>& ids, int64_t n,
                  ThreadPool& pool) {
  ForwardResult out;
  for (int64_t b = 0; b < n; b += 64) {
    const int64_t len = std::min<int64_t>(64, n - b);
    model.forward(Batch::causal(std::span(ids).subspan(b, len), static_cast<int32_t>(b)), kv, {},
                  out, pool);
    kv.keep_all();
  }
}

// The lower median of reps timed runs of `run` after one untimed warm-up run.
template <class F>
double median_seconds(int reps, F&& run) {
  std::vector<double> times;
  for (int r = 0; r < reps + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) times.push_back(s);  // the first run warms caches and workspaces
  }
  std::sort(times.begin(), times.end());
  return times[(times.size() - 1) / 2];
}

// `count` sequences over one shared pool, each with `context` committed random tokens and room
// for `capacity` in all (whole blocks each, so that every one fits however the pool is split).
struct FilledSequences {
  std::shared_ptr<KvPool> kv_pool;
  std::vector<KvCache> caches;
  std::vector<KvCache*> ptrs;
};
FilledSequences fill_sequences(LlamaModel& model, int64_t count, int64_t capacity, int64_t context,
                               uint64_t& state, ThreadPool& pool) {
  FilledSequences f;
  f.kv_pool =
      model.make_pool(count * KvPool::blocks_for_tokens(capacity, KvCache::kDefaultBlockSize) *
                      KvCache::kDefaultBlockSize);
  for (int64_t s = 0; s < count; ++s) {
    f.caches.push_back(model.make_cache(f.kv_pool, capacity));
    fill_context(model, f.caches.back(), random_ids(context, model.config().vocab_size, state),
                 context, pool);
  }
  for (auto& c : f.caches) f.ptrs.push_back(&c);
  return f;
}

}  // namespace

std::vector<CostPoint> measure_sequence_cost(LlamaModel& model,
                                             const std::vector<int64_t>& sequence_counts,
                                             const CostCurveOptions& options, ThreadPool& pool) {
  if (sequence_counts.empty()) fail("cost curve: no sequence counts given");
  const int64_t b_max = *std::max_element(sequence_counts.begin(), sequence_counts.end());
  if (*std::min_element(sequence_counts.begin(), sequence_counts.end()) < 1)
    fail("cost curve: sequence counts must be >= 1");
  const int64_t V = model.config().vocab_size;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  FilledSequences seqs =
      fill_sequences(model, b_max, options.context + 1, options.context, state, pool);
  const std::vector<KvCache*>& ptrs = seqs.ptrs;
  const std::vector<int32_t> next = random_ids(b_max, V, state);
  ForwardResult out;
  std::vector<CostPoint> curve;
  for (int64_t B : sequence_counts) {
    Batch batch;
    std::vector<int32_t> rows;
    for (int64_t s = 0; s < B; ++s) {
      batch.append(
          Batch::causal(std::span(next).subspan(s, 1), static_cast<int32_t>(options.context)),
          static_cast<int32_t>(s));
      rows.push_back(static_cast<int32_t>(s));
    }
    const std::span<KvCache* const> used(ptrs.data(), static_cast<size_t>(B));
    const double seconds = median_seconds(options.repetitions, [&] {
      model.forward(batch, used, rows, out, pool);
      for (KvCache* kv : used) kv->drop_pending();
    });
    curve.push_back({B, seconds, 0, 0});
  }
  const auto base =
      std::find_if(curve.begin(), curve.end(), [](const CostPoint& p) { return p.k == 1; });
  const double t1 = base != curve.end() ? base->seconds : curve.front().seconds / curve.front().k;
  for (auto& p : curve) p.relative = p.seconds / t1;
  return curve;
}

std::map<int64_t, std::vector<CostPoint>> measure_batch_curves(
    LlamaModel& model, const std::vector<int64_t>& sequence_counts,
    const std::vector<int64_t>& extras, const CostCurveOptions& options, ThreadPool& pool) {
  if (sequence_counts.empty() || extras.empty()) fail("cost curve: no batch shapes given");
  const int64_t b_max = *std::max_element(sequence_counts.begin(), sequence_counts.end());
  const int64_t e_max = *std::max_element(extras.begin(), extras.end());
  if (*std::min_element(sequence_counts.begin(), sequence_counts.end()) < 1 ||
      *std::min_element(extras.begin(), extras.end()) < 0)
    fail("cost curve: sequence counts must be >= 1 and extra rows >= 0");
  const int64_t V = model.config().vocab_size;
  // Room for the largest tree on top of each context (a sequence alone gets all e_max extra rows).
  uint64_t state = 0x2545f4914f6cdd1dull;
  FilledSequences seqs =
      fill_sequences(model, b_max, options.context + e_max + 1, options.context, state, pool);
  const std::vector<KvCache*>& ptrs = seqs.ptrs;
  const std::vector<int32_t> next = random_ids(b_max + e_max, V, state);
  ForwardResult out;
  std::map<int64_t, std::vector<CostPoint>> curves;
  for (int64_t B : sequence_counts) {
    std::vector<CostPoint>& curve = curves[B];
    for (int64_t extra : extras) {
      Batch batch;
      std::vector<int32_t> rows;
      for (int64_t s = 0; s < B; ++s) {
        // Sequence s gets its root and every B-th extra row from s on, all children of the root.
        std::vector<int32_t> tokens{next[static_cast<size_t>(s)]}, parents{-1};
        for (int64_t e = s; e < extra; e += B) {
          tokens.push_back(next[static_cast<size_t>(B + e)]);
          parents.push_back(0);
        }
        batch.append(Batch::tree(tokens, parents, static_cast<int32_t>(options.context)),
                     static_cast<int32_t>(s));
      }
      for (int64_t r = 0; r < batch.size(); ++r) rows.push_back(static_cast<int32_t>(r));
      const std::span<KvCache* const> used(ptrs.data(), static_cast<size_t>(B));
      const double seconds = median_seconds(options.repetitions, [&] {
        model.forward(batch, used, rows, out, pool);
        for (KvCache* kv : used) kv->drop_pending();
      });
      curve.push_back({B + extra, seconds, 0, 0});
    }
    std::sort(curve.begin(), curve.end(),
              [](const CostPoint& a, const CostPoint& b) { return a.k < b.k; });
    for (auto& p : curve) p.relative = p.seconds / curve.front().seconds;
  }
  return curves;
}

std::vector<CostPoint> measure_cost_curve(LlamaModel& model, const CostCurveOptions& options,
                                          ThreadPool& pool) {
  if (options.ks.empty()) fail("cost curve: no batch sizes given");
  const int64_t k_max = *std::max_element(options.ks.begin(), options.ks.end());
  if (*std::min_element(options.ks.begin(), options.ks.end()) < 1)
    fail("cost curve: batch sizes must be >= 1");
  const int64_t V = model.config().vocab_size;
  KvCache kv = model.make_cache(options.context + k_max);
  ForwardResult out;

  // A deterministic pseudo-random context (a 64-bit LCG; the golden-ratio word is only its seed,
  // this is not SplitMix64, and the ids need not match any other stream).
  std::vector<int32_t> ids(static_cast<size_t>(std::max<int64_t>(options.context, k_max)));
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (auto& id : ids) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    id = static_cast<int32_t>((state >> 33) % static_cast<uint64_t>(V));
  }
  if (options.context > 0) {
    for (int64_t b = 0; b < options.context; b += 64) {
      const int64_t len = std::min<int64_t>(64, options.context - b);
      Batch batch = Batch::causal(std::span(ids).subspan(b, len), static_cast<int32_t>(b));
      model.forward(batch, kv, {}, out, pool);
      kv.keep_all();
    }
  }

  std::vector<CostPoint> curve;
  for (int64_t k : options.ks) {
    std::vector<int32_t> tokens(ids.begin(), ids.begin() + k), parents(static_cast<size_t>(k));
    // Tree: a root with a few chains under it (like a draft tree); chain: causal.
    for (int64_t i = 0; i < k; ++i)
      parents[i] = options.tree ? (i == 0 ? -1 : static_cast<int32_t>(i <= 4 ? 0 : i - 4))
                                : static_cast<int32_t>(i - 1);
    Batch batch = Batch::tree(tokens, parents, static_cast<int32_t>(kv.size()));
    std::vector<int32_t> rows(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) rows[i] = static_cast<int32_t>(i);
    std::vector<double> times;
    model.reset_experts_touched();
    for (int r = 0; r < options.repetitions + 1; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      model.forward(batch, kv, rows, out, pool);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      kv.drop_pending();
      if (r > 0) times.push_back(s);  // the first run warms caches and workspaces
    }
    std::sort(times.begin(), times.end());
    // Every repetition routes the same batch alike: the count per forward and layer.
    const double experts = static_cast<double>(model.experts_touched()) /
                           (options.repetitions + 1) /
                           static_cast<double>(model.config().num_layers);
    curve.push_back({k, times[(times.size() - 1) / 2], 0, experts});  // the lower median
  }
  const auto base =
      std::find_if(curve.begin(), curve.end(), [](const CostPoint& p) { return p.k == 1; });
  const double t1 = base != curve.end() ? base->seconds : curve.front().seconds / curve.front().k;
  for (auto& p : curve) p.relative = p.seconds / t1;
  return curve;
}

}  // namespace eagle2
