#include "speculative/speculative_decoder.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "core/error.h"
#include "core/stopwatch.h"
#include "speculative/cycle_checks.h"
#include "speculative/feature_capture.h"

namespace eagle2 {

void SpeculativeStats::count_sources(const DraftTree& tree, const std::vector<int32_t>& path) {
  // Depth bins per source: every node counts in [0]; a recorded source in [1] and/or [2].
  std::vector<int32_t> bin(tree.parents.size(), -1);
  for (size_t i = 1; i < tree.parents.size(); ++i)
    bin[i] = std::min(bin[static_cast<size_t>(tree.parents[i])] + 1, kDepthBins - 1);
  auto add = [&](std::array<std::array<int64_t, kDepthBins>, 3>& counts, size_t node) {
    const auto b = static_cast<size_t>(bin[node]);
    ++counts[0][b];
    if (tree.sources.empty()) return;
    if (tree.sources[node] & DraftTree::kFromHead) ++counts[1][b];
    if (tree.sources[node] & DraftTree::kFromSuffix) ++counts[2][b];
  };
  // Only nodes that can be accepted: a lookahead tree's Jacobi window rides along unverified and
  // would understate the acceptance per depth.
  const auto verifiable = static_cast<size_t>(tree.verifiable_size());
  for (size_t i = 1; i < verifiable; ++i) add(drafted_by_depth, i);
  for (size_t j = 1; j < path.size(); ++j) add(accepted_by_depth, static_cast<size_t>(path[j]));
  if (tree.sources.empty()) return;
  for (size_t i = 1; i < tree.sources.size(); ++i) {
    head_drafted += (tree.sources[i] & DraftTree::kFromHead) != 0;
    suffix_drafted += (tree.sources[i] & DraftTree::kFromSuffix) != 0;
  }
  for (size_t j = 1; j < path.size(); ++j) {
    const uint8_t from = tree.sources[static_cast<size_t>(path[j])];
    head_accepted += (from & DraftTree::kFromHead) != 0;
    suffix_accepted += (from & DraftTree::kFromSuffix) != 0;
  }
}

double SpeculativeStats::tau() const {
  if (cycles == 0) return 0;
  int64_t committed = 0;
  for (size_t a = 0; a < accept_histogram.size(); ++a)
    committed += accept_histogram[a] * static_cast<int64_t>(a + 1);
  return static_cast<double>(committed) / static_cast<double>(cycles);
}

SpeculativeStats speculative_generate(LlamaModel& model, KvCache& kv, Drafter& drafter,
                                      const std::vector<int32_t>& prompt,
                                      const GenerationOptions& options, ThreadPool& pool,
                                      const TokenCallback& on_token,
                                      const SpeculativeHooks& hooks) {
  options.sampling.validate();
  // The drafter is told only about `prompt` (begin()), so a target cache that already holds
  // context would put the head at other positions than the target: drafting would silently
  // degrade. Callers reset the cache (kv.truncate(0)) between generations.
  if (kv.size() != 0)
    fail("speculative decoding needs an empty KV cache (it holds ", kv.size(),
         " tokens; truncate it to 0 first)");
  SpeculativeStats st;
  st.prompt_tokens = static_cast<int64_t>(prompt.size());
  const LlamaConfig& cfg = model.config();
  const int64_t V = cfg.vocab_size, d = cfg.hidden_size;
  ForwardResult out;
  // The drafter's features (final-norm states, or captured layer inputs for an EAGLE-3 head) come
  // from the prefill and each verify forward themselves: no extra target forward.
  const std::span<const int32_t> layers = drafter.feature_layers();
  const FeatureRows features{.out = &out, .captured_layers = layers, .layers = layers, .d = d};

  auto t0 = SteadyClock::now();
  prefill(model, kv, prompt, options.prefill_chunk, out, pool, layers);
  st.prefill_seconds = seconds_since(t0);

  const auto decode_start = SteadyClock::now();
  // Emits one token; false when generation must stop (EOS, limit, or the caller).
  auto emit = [&](int32_t token) {
    if (options.stop_at_eos && is_eos(cfg, token)) {
      st.stopped_at_eos = true;
      return false;
    }
    ++st.new_tokens;
    if (!on_token(token)) return false;
    return st.new_tokens < options.max_new_tokens;
  };

  bool go = options.max_new_tokens > 0;
  int32_t root = 0;
  if (go) {
    root = sample_token(out.logits.data(), V, options.sampling, 0);  // output position 0
    go = emit(root);
  }
  if (go) {
    auto td = SteadyClock::now();
    drafter.set_sampling(options.sampling);
    drafter.begin(prompt, layers.empty() ? out.hidden.data() : out.captured.data(), root);
    st.draft_seconds += seconds_since(td);
  }
  DraftTree tree;
  std::vector<int32_t> rows;
  std::vector<float> path_features;
  std::vector<int32_t> target_argmax;  // per tree node, for drafters that want it
  while (go) {
    const int64_t n = kv.size();
    const int64_t room = kv.capacity() - n;
    if (room < 1) {
      st.stopped_at_context = true;
      break;
    }
    auto td = SteadyClock::now();
    drafter.draft(room, tree);
    st.draft_seconds += seconds_since(td);
    check_drafted_tree(tree, V, root, room, drafter.name());

    auto tv = SteadyClock::now();
    rows.resize(static_cast<size_t>(tree.size()));
    for (int64_t i = 0; i < tree.size(); ++i) rows[i] = static_cast<int32_t>(i);
    // Every tree row is captured: which of them verification keeps is not known yet.
    const ForwardCapture capture{.layers = layers,
                                 .rows = layers.empty() ? std::span<const int32_t>() : rows};
    model.forward(Batch::tree(tree.tokens, tree.parents, static_cast<int32_t>(n)), kv, rows, out,
                  pool, capture);
    // Every token emitted so far (the root included) has an output position below this one: the
    // root's first child is the next.
    const auto first_position = static_cast<uint64_t>(st.new_tokens);
    const Verdict verdict =
        options.sampling.greedy() ? verify_greedy(tree, out.logits.data(), V)
        : hooks.verify_sampling
            ? hooks.verify_sampling(tree, out.logits.data(), V, options.sampling, first_position)
            : verify_sampled_tree(tree, out.logits.data(), V, options.sampling, first_position);
    check_verdict(verdict, tree, V);
    kv.keep(verdict.path);
    st.verify_seconds += seconds_since(tv);

    ++st.cycles;
    ++st.target_forwards;
    st.drafted_tokens += tree.size() - 1;
    st.count_sources(tree, verdict.path);
    const auto a = static_cast<size_t>(verdict.accepted());
    if (st.accept_histogram.size() <= a) st.accept_histogram.resize(a + 1, 0);
    ++st.accept_histogram[a];
    if (hooks.trace) hooks.trace(CycleTrace{st.cycles - 1, n, tree, verdict});

    for (size_t j = 1; j < verdict.path.size() && go; ++j) go = emit(tree.tokens[verdict.path[j]]);
    if (go) go = emit(verdict.bonus);
    if (!go) break;

    path_features.clear();
    for (int32_t node : verdict.path) features.append(node, path_features);
    td = SteadyClock::now();
    if (drafter.wants_target_tokens()) {
      argmax_per_node(out.logits.data(), tree.size(), V, target_argmax);
      drafter.target_tokens(target_argmax);
    }
    drafter.accept(tree, verdict.path, path_features.data(), verdict.bonus);
    st.draft_seconds += seconds_since(td);
    root = verdict.bonus;
  }
  st.decode_seconds = seconds_since(decode_start);
  return st;
}

}  // namespace eagle2
