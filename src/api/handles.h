// The library's side of the public handles (include/eagle2/): each Impl owns the internal object
// the handle stands for. Only src/api sees these; the public headers declare them opaque.
#pragma once

#include <memory>
#include <vector>

#include "bench/bench_runner.h"
#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "eagle2/bench.h"
#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "eagle2/train_head.h"
#include "eagle2/train_lm.h"
#include "model/cost_curve.h"
#include "model/kv_cache.h"
#include "model/llama_model.h"
#include "speculative/batch_budget.h"
#include "speculative/draft_policy.h"
#include "speculative/drafter.h"
#include "speculative/tree_budget.h"
#include "tokenizer/tokenizer.h"
#include "train/head_data.h"
#include "train/train_lm.h"

namespace eagle2::api {

struct Threads::Impl {
  explicit Impl(int n) : pool(n) {}
  ThreadPool pool;
};

struct Model::Impl {
  std::unique_ptr<LlamaModel> model;  // by pointer: heads keep its address
  ModelConfig config;                 // model->config(), in the public spelling
};

struct Tokenizer::Impl {
  std::unique_ptr<eagle2::Tokenizer> tokenizer;  // by pointer: streams keep its address
};

struct TextStream::Impl {
  StreamingDecoder decoder;
};

struct Head::Impl {
  std::unique_ptr<EagleHead> head;  // by pointer: drafters and policies keep its address
};

struct VerifyCost::Impl {
  std::shared_ptr<const VerifyCostModel> model;
  std::vector<CostPoint> curve;
  std::shared_ptr<const BatchCostModel> batch;  // null unless measured with max_sequences > 1
  std::vector<std::pair<int64_t, std::vector<CostPoint>>> batch_curves;
};

// The policies first: the drafter holds a policy of theirs.
struct Drafter::Impl {
  std::unique_ptr<DraftPolicies> policies;
  std::unique_ptr<eagle2::Drafter> drafter;  // null for "plain"
};

struct KvCache::Impl {
  eagle2::KvCache kv;
};

struct TrainLmConfig::Impl {
  train::TrainLmConfig config;
};

struct HeadData::Impl {
  std::vector<train::HeadSequence> sequences;
};

struct BenchRun::Impl {
  std::vector<RunRecord> records;
  std::vector<Summary> summary;    // summarize(records)
  std::vector<BenchSummary> rows;  // the same in the public spelling
};

}  // namespace eagle2::api
