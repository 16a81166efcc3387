// The server-wide suffix index (api::Engine::share_suffix_index, eagle2 serve --suffix-scope
// server) under a long stream of requests: what its bound counts never passes --suffix-memory, the
// trie's node storage (live or free) never passes its node cap, and the oldest outputs are evicted
// one by one. Counted through the engine's API rather than the process's RSS, which allocator
// caching and the other tests of the executable would make noisy: the index's memory is its
// node storage and its kept outputs, both of which the usage reports.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "eagle2/drafter.h"
#include "eagle2/engine.h"
#include "eagle2/generate.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

TEST(SuffixIndexStream, StaysWithinItsBoundOverALongStream) {
  auto target =
      test::load_random_model("suffix-stream", test::tiny_config(), DType::BF16, 45, 0.3f);
  api::Model model = api::Model::load(target->dir());
  api::Threads threads(1);
  const int64_t ctx = 64, parallel = 8, requests = 80;
  api::Engine engine(model, api::Engine::kv_tokens_for(parallel, ctx), ctx, threads);
  const int64_t bound = int64_t{1} << 20;  // the smallest --suffix-memory
  engine.share_suffix_index(bound);
  api::GenerateOptions opt;
  opt.max_new_tokens = 32;
  opt.stop_at_eos = false;
  const api::DrafterSpec spec = api::parse_drafter_spec("suffix:8:7:1");
  // Prompts of random tokens: the random model's outputs then differ from request to request, so
  // that each output adds new trie nodes and the stream outgrows the bound.
  std::mt19937 rng(45);
  const auto vocab = static_cast<uint32_t>(model.config().vocab_size);
  int64_t added = 0, ended = 0, first_eviction_at = -1;
  std::vector<int64_t> live;
  while (ended < requests) {
    while (added < requests && static_cast<int64_t>(live.size()) < parallel) {
      std::vector<int32_t> prompt(6);
      for (int32_t& t : prompt) t = static_cast<int32_t>(rng() % vocab);
      live.push_back(engine.add(prompt, opt, spec));
      ++added;
    }
    engine.step();
    // A sequence's drafter publishes its output as the sequence finishes (inside the step).
    for (auto it = live.begin(); it != live.end();) {
      if (!engine.finished(*it)) {
        ++it;
        continue;
      }
      engine.remove(*it);
      it = live.erase(it);
      ++ended;
    }
    const api::Engine::SuffixIndexUsage u = engine.suffix_index_usage();
    ASSERT_EQ(u.max_bytes, bound);
    ASSERT_LE(u.bytes, bound) << "after " << ended << " requests";
    ASSERT_LE(u.node_slots, u.max_nodes + 1) << "after " << ended << " requests";
    // Each request's output is one document, kept or evicted.
    ASSERT_EQ(u.documents + u.evictions, ended);
    if (u.evictions > 0 && first_eviction_at < 0) first_eviction_at = ended;
  }
  const api::Engine::SuffixIndexUsage u = engine.suffix_index_usage();
  // The stream went well past what the bound holds: most outputs were evicted, and what is kept
  // fills the bound (at least half of it: an output takes far less than the other half).
  EXPECT_GT(first_eviction_at, 0);
  EXPECT_LT(first_eviction_at, requests / 2);
  EXPECT_GT(u.evictions, requests / 2);
  EXPECT_GT(u.bytes, bound / 2);
}

TEST(SuffixIndexStream, NoIndexWithoutSharing) {
  auto target =
      test::load_random_model("suffix-stream", test::tiny_config(), DType::BF16, 45, 0.3f);
  api::Model model = api::Model::load(target->dir());
  api::Threads threads(1);
  api::Engine engine(model, api::Engine::kv_tokens_for(1, 64), 64, threads);
  const api::Engine::SuffixIndexUsage u = engine.suffix_index_usage();
  EXPECT_EQ(u.bytes + u.max_bytes + u.node_slots + u.documents + u.evictions, 0);
}

}  // namespace
}  // namespace eagle2
