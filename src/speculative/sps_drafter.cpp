#include "speculative/sps_drafter.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kernels/ops.h"
#include "sampling/position_random.h"
#include "speculative/eagle_drafter.h"

namespace eagle2 {

namespace {

// "SPS-DRAF": the key of the draft's own stream of uniforms.
constexpr uint64_t kDraftStreamKey = 0x5350532d44524146ull;

// log-softmax of one row of draft logits (in place into logp).
void log_softmax_row(const float* logits, int64_t n, std::vector<float>& logp) {
  check_logits(logits, n);
  logp.resize(static_cast<size_t>(n));
  const float lse = log_sum_exp(logits, n);
  for (int64_t t = 0; t < n; ++t) logp[t] = logits[t] - lse;
}

}  // namespace

SpsDrafter::SpsDrafter(std::shared_ptr<LlamaModel> draft, ThreadPool& pool,
                       SpsDrafterOptions options)
    : model_(std::move(draft)),
      pool_(pool),
      opt_(options),
      kv_(model_->make_cache(options.context)) {
  if (opt_.depth < 0 || opt_.top_k < 1)
    fail("sps drafter: depth ", opt_.depth, " and top-k ", opt_.top_k, " must be >= 0 and >= 1");
  if (opt_.top_k > model_->config().vocab_size)
    fail("sps drafter: top-k ", opt_.top_k, " exceeds the vocabulary (",
         model_->config().vocab_size, ")");
}

double SpsDrafter::draft_uniform(uint64_t seed, uint64_t n) {
  return counter_uniform(seed ^ kDraftStreamKey, n);
}

void SpsDrafter::begin(std::span<const int32_t> context, const float*, int32_t root) {
  kv_.truncate(0);
  pending_.assign(context.begin(), context.end());
  pending_.push_back(root);
  emitted_ = 1;  // the root is output position 0
  chain_ran_ = 0;
  stable_ = 0;
}

void SpsDrafter::catch_up() {
  // The prompt at begin() can be long: run it in chunks, as prefill does (the same rows either
  // way; chunks bound the forward's scratch memory).
  constexpr size_t kChunk = 256;
  for (size_t at = 0; at < pending_.size(); at += kChunk) {
    const size_t n = std::min(kChunk, pending_.size() - at);
    const std::span<const int32_t> rows(pending_.data() + at, n);
    const int32_t last = static_cast<int32_t>(n - 1);
    model_->forward(Batch::causal(rows, static_cast<int32_t>(kv_.size())), kv_,
                    std::span<const int32_t>(&last, 1), out_, pool_);
    kv_.keep_all();
  }
  pending_.clear();
}

void SpsDrafter::draft(int64_t max_tokens, DraftTree& tree) {
  // The root is the last pending token (never empty between begin() and the next accept()).
  tree.reset(pending_.back());
  catch_up();
  stable_ = kv_.size();
  chain_ran_ = 0;
  const int64_t levels = std::min<int64_t>(opt_.depth + 1, max_tokens - 1);
  if (levels <= 0) return;
  if (opt_.top_k == 1)
    draft_chain(levels, tree);
  else
    draft_tree(max_tokens, tree);
}

void SpsDrafter::draft_chain(int64_t n_draft, DraftTree& tree) {
  const int64_t V = model_->config().vocab_size;
  const bool sampled = !sampling_.greedy();
  std::vector<float> logp;
  if (sampled) {
    tree.draft_q_vocab = V;
    tree.draft_q.assign(static_cast<size_t>(n_draft + 1) * static_cast<size_t>(V), 0.0);
  }
  for (int64_t i = 0; i < n_draft; ++i) {
    // out_ holds the draft's logits at node i (the root, then each drafted token).
    const float* logits = out_.logits.data();
    int32_t x;
    if (sampled) {
      const Distribution q = process_logits(logits, V, sampling_);
      std::copy(q.p.begin(), q.p.end(), tree.draft_q.begin() + i * V);
      // Node i + 1 is output position emitted_ + i.
      x = sample_with(q, draft_uniform(sampling_.seed, static_cast<uint64_t>(emitted_ + i)));
    } else {
      x = argmax(logits, V);
    }
    log_softmax_row(logits, V, logp);
    tree.add(x, static_cast<int32_t>(i), tree.values[i] + logp[x], logp[x], 0);
    if (i + 1 == n_draft) break;  // the last token's own prediction is not needed
    // Run the drafted token into the cache at its final position; accept() keeps it if verified.
    const int32_t row = 0;
    model_->forward(
        Batch::causal(std::span<const int32_t>(&x, 1), static_cast<int32_t>(kv_.size())), kv_,
        std::span<const int32_t>(&row, 1), out_, pool_);
    kv_.keep_all();
    ++chain_ran_;
  }
}

void SpsDrafter::draft_tree(int64_t max_tokens, DraftTree& tree) {
  const int64_t V = model_->config().vocab_size;
  DynamicTreeParams params;
  params.top_k = opt_.top_k;
  // Levels past the room would run past the draft cache's context, and every fed node of a level
  // takes a pending slot of it.
  const int64_t slots = (kv_.capacity() - kv_.size()) / opt_.top_k;
  params.depth = static_cast<int>(std::min<int64_t>({opt_.depth, max_tokens - 2, slots}));
  params.total_tokens = 1 + opt_.top_k * (opt_.depth + 1);
  builder_.start(tree.tokens[0], params, max_tokens);
  std::vector<float> logp;
  Batch batch;
  std::vector<int32_t> rows;
  for (DraftStep step = builder_.next(); step.kind != DraftStep::Kind::Done;
       step = builder_.next()) {
    const auto k = static_cast<size_t>(step.k);
    top_tokens_.resize(step.rows * k);
    top_logp_.resize(step.rows * k);
    if (step.kind == DraftStep::Kind::RootChildren) {
      log_softmax_row(out_.logits.data(), V, logp);
      top_k_of(logp.data(), V, step.k, top_tokens_.data(), top_logp_.data());
    } else {
      // Every fed node so far (the levels above re-run: see the header), parents first; logits
      // for the newest level only.
      const std::vector<FedNode>& fed = builder_.fed();
      batch = Batch{};
      rows.clear();
      for (size_t f = 0; f < fed.size(); ++f) {
        batch.tokens.push_back(fed[f].token);
        batch.positions.push_back(static_cast<int32_t>(stable_ - 1 + fed[f].depth));
        batch.parents.push_back(fed[f].parent_fed);
        if (f >= step.first) rows.push_back(static_cast<int32_t>(f));
      }
      model_->forward(batch, kv_, rows, out_, pool_);
      kv_.drop_pending();
      for (size_t r = 0; r < rows.size(); ++r) {
        log_softmax_row(&out_.logits[r * V], V, logp);
        top_k_of(logp.data(), V, step.k, &top_tokens_[r * k], &top_logp_[r * k]);
      }
    }
    builder_.supply(top_tokens_, top_logp_);
  }
  builder_.finish(tree);
}

void SpsDrafter::accept(const DraftTree& tree, std::span<const int32_t> path, const float*,
                        int32_t bonus) {
  // The chain's first chain_ran_ drafted tokens are in the cache; keep those that were accepted.
  // path[j] is the drafted node at depth j, and depth j of a chain is cache row stable_ + j - 1.
  const auto accepted = static_cast<int64_t>(path.size()) - 1;
  const int64_t kept = std::min(accepted, chain_ran_);
  kv_.truncate(stable_ + kept);
  pending_.clear();
  for (int64_t j = kept + 1; j <= accepted; ++j)
    pending_.push_back(tree.tokens[static_cast<size_t>(path[static_cast<size_t>(j)])]);
  pending_.push_back(bonus);
  emitted_ += accepted + 1;
  chain_ran_ = 0;
}

}  // namespace eagle2
