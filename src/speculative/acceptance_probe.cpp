#include "speculative/acceptance_probe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "core/splitmix64.h"
#include "model/batch.h"
#include "sampling/position_random.h"
#include "speculative/generation.h"

namespace eagle2 {

namespace {

constexpr int64_t kProbeRowsPerForward = 64;  // bounds the logits buffer of one forward

// The probe's own draws (a token from q and its acceptance at each root and depth) come from a
// stream keyed apart from the target's sampling: the target's sampled path must not be coupled
// with the draft's sample.
constexpr uint64_t kDrawKey = 0x5eed0f0acce97ULL;

// The k token ids with the largest values, largest first, ties towards the lower id (as the
// drafters' top_k_of ranks them); -inf values (tokens the draft cannot propose) rank last.
void top_ids(const float* values, int64_t n, int k, std::vector<int32_t>& out) {
  out.resize(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), 0);
  const auto kk = static_cast<ptrdiff_t>(std::min<int64_t>(k, n));
  std::partial_sort(out.begin(), out.begin() + kk, out.end(), [&](int32_t a, int32_t b) {
    return values[a] > values[b] || (values[a] == values[b] && a < b);
  });
  out.resize(static_cast<size_t>(kk));
}

}  // namespace

Distribution processed_distribution(const float* logits, int64_t n, const SamplingParams& params) {
  if (!params.greedy()) return process_logits(logits, n, params);
  Distribution d;
  d.p.assign(static_cast<size_t>(n), 0.0);
  d.p[static_cast<size_t>(argmax(logits, n))] = 1.0;
  return d;
}

PairAcceptance compare_pair(const Distribution& p, const Distribution& q, const float* draft_logits,
                            int64_t vocab, int32_t target_token, int draft_top_k, double u_draw,
                            double u_accept) {
  if (p.p.size() != static_cast<size_t>(vocab) || q.p.size() != static_cast<size_t>(vocab))
    fail("acceptance probe: distributions of ", p.p.size(), " and ", q.p.size(),
         " tokens for a vocabulary of ", vocab);
  PairAcceptance r;
  double abs_diff = 0;
  for (int64_t t = 0; t < vocab; ++t) {
    const double pt = p.p[static_cast<size_t>(t)];
    abs_diff += std::abs(pt - q.p[static_cast<size_t>(t)]);
    if (pt > 0) r.entropy -= pt * std::log(pt);
  }
  r.tv = 0.5 * abs_diff;

  std::vector<int32_t> ranked;
  top_ids(draft_logits, vocab, draft_top_k, ranked);
  r.top1_expected = p.p[static_cast<size_t>(ranked[0])];
  r.top1_hit = ranked[0] == target_token;
  for (int32_t t : ranked) {
    r.topk_expected += p.p[static_cast<size_t>(t)];
    r.topk_hit = r.topk_hit || t == target_token;
  }
  std::vector<double> sorted_p(p.p);
  const auto kk = static_cast<ptrdiff_t>(ranked.size());
  std::partial_sort(sorted_p.begin(), sorted_p.begin() + kk, sorted_p.end(), std::greater<>());
  r.top1_ceiling = sorted_p[0];
  r.topk_ceiling = std::accumulate(sorted_p.begin(), sorted_p.begin() + kk, 0.0);

  // A token y from q, accepted with probability min(1, p(y) / q(y)): the rule of
  // verify_sampling_from_draft, whose acceptance has expectation 1 - TV.
  const int32_t y = sample_with(q, u_draw);
  const double qy = q.p[static_cast<size_t>(y)], py = p.p[static_cast<size_t>(y)];
  r.sampled_accept = u_accept * qy < py;
  return r;
}

PathForward forward_path(LlamaModel& target, std::span<const int32_t> path, int64_t first_logit_row,
                         std::span<const int32_t> layers, ThreadPool& pool) {
  const auto n = static_cast<int64_t>(path.size());
  if (n < 2 || first_logit_row < 0 || first_logit_row > n - 2)
    fail("acceptance probe: a path of ", n, " tokens with logits from row ", first_logit_row);
  const int64_t vocab = target.config().vocab_size;
  const int64_t d = target.config().hidden_size;
  const int64_t width = layers.empty() ? d : static_cast<int64_t>(layers.size()) * d;
  PathForward r;
  r.logits.reserve(static_cast<size_t>((n - 1 - first_logit_row) * vocab));
  r.features.reserve(static_cast<size_t>((n - 1) * width));
  KvCache kv = target.make_cache(n);
  ForwardResult out;
  std::vector<int32_t> logit_rows, all_rows;
  // Row n - 1 (the last token) is neither a feature nor a logit row anyone reads.
  for (int64_t begin = 0; begin < n - 1; begin += kProbeRowsPerForward) {
    const int64_t len = std::min(kProbeRowsPerForward, n - 1 - begin);
    const Batch b =
        Batch::causal(path.subspan(static_cast<size_t>(begin), static_cast<size_t>(len)),
                      static_cast<int32_t>(begin));
    logit_rows.clear();
    all_rows.resize(static_cast<size_t>(len));
    std::iota(all_rows.begin(), all_rows.end(), 0);
    for (int64_t i = std::max(begin, first_logit_row); i < begin + len; ++i)
      logit_rows.push_back(static_cast<int32_t>(i - begin));
    const ForwardCapture capture{
        .layers = layers,
        .rows = layers.empty() ? std::span<const int32_t>() : std::span<const int32_t>(all_rows)};
    target.forward(b, kv, logit_rows, out, pool, capture);
    kv.keep_all();
    r.logits.insert(r.logits.end(), out.logits.begin(), out.logits.end());
    const std::vector<float>& f = layers.empty() ? out.hidden : out.captured;
    r.features.insert(r.features.end(), f.begin(), f.end());
  }
  return r;
}

EagleHeadPathSource::EagleHeadPathSource(EagleHead& head, const LlamaModel& target,
                                         ThreadPool& pool, int64_t context)
    : head_(head), pool_(pool), vocab_(target.config().vocab_size), kv_(head.make_cache(context)) {}

void EagleHeadPathSource::begin(std::span<const int32_t> path, const float* features,
                                int64_t first_root) {
  if (first_root < 1 || first_root >= static_cast<int64_t>(path.size()))
    fail("acceptance probe: first root ", first_root, " outside a path of ", path.size());
  path_ = path;
  features_ = features;
  kv_.drop_pending();
  kv_.truncate(0);
  committed_ = 0;
  last_out_.clear();
}

void EagleHeadPathSource::draft_logits(int64_t root, int depth, float* out) {
  const int64_t d = head_.config().hidden_size;
  const int64_t width = head_.feature_width();
  const int64_t vocab = vocab_;
  const int64_t dv = head_.draft_vocab_size();
  if (root < committed_ || root < 1 || depth < 1 ||
      root + depth > static_cast<int64_t>(path_.size()) - 1)
    fail("acceptance probe: root ", root, " depth ", depth, " outside the path");
  kv_.drop_pending();
  // Catch up: the pairs (f_j, x_{j+1}) for j < root, as the drafter's catch-up commits them.
  for (int64_t b = committed_; b < root; b += kProbeRowsPerForward) {
    const int64_t len = std::min(kProbeRowsPerForward, root - b);
    scratch_.resize(static_cast<size_t>(len * d));
    head_.forward_causal(features_ + b * width, path_.subspan(static_cast<size_t>(b + 1), len), kv_,
                         scratch_.data(), pool_);
    if (b + len == root) last_out_.assign(scratch_.end() - d, scratch_.end());
  }
  committed_ = root;
  if (last_out_.empty()) fail("acceptance probe: draft_logits before any context");

  // Depth k >= 2 feeds x_{root+k-1} with the head's output of depth k - 1, at position
  // root + k - 2 and slot root + k - 2, seeing its ancestors' slots: expand_top_k's rows.
  fed_out_.resize(static_cast<size_t>(depth * d));
  std::memcpy(fed_out_.data(), last_out_.data(), static_cast<size_t>(d) * sizeof(float));
  if (depth > 1) kv_.begin_batch(depth - 1);
  std::vector<int32_t> visible;
  for (int k = 2; k <= depth; ++k) {
    const auto slot = static_cast<int32_t>(root + k - 2);
    const int32_t token = path_[static_cast<size_t>(root + k - 1)];
    visible.push_back(slot);
    const int64_t begin[2] = {0, static_cast<int64_t>(visible.size())};
    EagleHead::Rows rows{&fed_out_[static_cast<size_t>((k - 2) * d)],
                         std::span(&token, 1),
                         std::span(&slot, 1),
                         std::span(&slot, 1),
                         visible,
                         begin};
    head_.forward(rows, kv_, &fed_out_[static_cast<size_t>((k - 1) * d)], pool_);
  }
  kv_.drop_pending();

  logp_.resize(static_cast<size_t>(depth * dv));
  head_.draft_logprobs(fed_out_.data(), depth, logp_.data(), pool_);
  std::fill(out, out + depth * vocab, -std::numeric_limits<float>::infinity());
  for (int k = 0; k < depth; ++k)
    for (int64_t j = 0; j < dv; ++j)
      out[k * vocab + head_.draft_token(j)] = logp_[static_cast<size_t>(k * dv + j)];
}

ModelPathSource::ModelPathSource(LlamaModel& draft, const LlamaModel& target, ThreadPool& pool)
    : draft_(draft), pool_(pool) {
  if (draft.config().vocab_size != target.config().vocab_size)
    fail("acceptance probe: the draft model's vocabulary (", draft.config().vocab_size,
         " tokens) is not the target's (", target.config().vocab_size, ")");
}

void ModelPathSource::begin(std::span<const int32_t> path, const float*, int64_t first_root) {
  first_row_ = first_root;
  logits_ = forward_path(draft_, path, first_root, {}, pool_).logits;
}

void ModelPathSource::draft_logits(int64_t root, int depth, float* out) {
  const int64_t vocab = draft_.config().vocab_size;
  const int64_t rows = static_cast<int64_t>(logits_.size()) / vocab;
  if (root < first_row_ || depth < 1 || root - first_row_ + depth > rows)
    fail("acceptance probe: root ", root, " depth ", depth, " outside the path");
  // Depth k's distribution is the draft model's after x_0..x_{root+k-1}: its row root + k - 1.
  std::memcpy(out, &logits_[static_cast<size_t>((root - first_row_) * vocab)],
              static_cast<size_t>(depth * vocab) * sizeof(float));
}

std::vector<int32_t> probe_acceptance(LlamaModel& target, PathDraftSource& source,
                                      const std::vector<int32_t>& prompt,
                                      const AcceptanceProbeOptions& options, ThreadPool& pool,
                                      AcceptanceTally& tally, std::vector<int32_t>* top1_runs) {
  options.sampling.validate();
  if (prompt.empty()) fail("acceptance probe: an empty prompt");
  if (options.depth < 1 || options.draft_top_k < 1 || options.new_tokens < 2)
    fail("acceptance probe: depth ", options.depth, ", draft top-k ", options.draft_top_k,
         " and new tokens ", options.new_tokens, " must be >= 1, >= 1 and >= 2");
  const int64_t vocab = target.config().vocab_size;
  const auto P = static_cast<int64_t>(prompt.size());
  if (P + options.new_tokens > target.config().max_position_embeddings)
    fail("acceptance probe: a prompt of ", P, " tokens and ", options.new_tokens,
         " new ones exceed the model's context of ", target.config().max_position_embeddings);
  if (tally.depths.size() < static_cast<size_t>(options.depth))
    tally.depths.resize(static_cast<size_t>(options.depth));

  // The target's own sampled continuation: plain decoding with these settings and seed.
  std::vector<int32_t> path = prompt;
  {
    KvCache kv = target.make_cache(P + options.new_tokens);
    GenerationOptions g;
    g.max_new_tokens = options.new_tokens;
    g.sampling = options.sampling;
    g.stop_at_eos = options.stop_at_eos;
    generate_plain(target, kv, prompt, g, pool, [&](int32_t t) {
      path.push_back(t);
      return true;
    });
  }
  std::vector<int32_t> continuation(path.begin() + P, path.end());
  ++tally.prompts;
  tally.new_tokens += static_cast<int64_t>(continuation.size());
  if (top1_runs) top1_runs->clear();
  const auto L = static_cast<int64_t>(path.size());
  // Roots x_P..x_{L-2}: each has at least one path token after it to compare with.
  if (L - P < 2) return continuation;

  const PathForward fw = forward_path(target, path, P, source.feature_layers(), pool);
  source.begin(path, fw.features.data(), P);
  const uint64_t draw_base = splitmix64_mix(options.sampling.seed ^ kDrawKey);
  std::vector<float> draft(static_cast<size_t>(options.depth * vocab));
  for (int64_t s = P; s <= L - 2; ++s) {
    const int depth = static_cast<int>(std::min<int64_t>(options.depth, L - 1 - s));
    source.draft_logits(s, depth, draft.data());
    ++tally.roots;
    int top1_run = -1, sampled_run = -1;  // -1: no depth failed yet
    for (int k = 1; k <= depth; ++k) {
      // p of x_{s+k}: the target's logits row s + k - 1 (rows from P in fw.logits).
      const float* target_row = &fw.logits[static_cast<size_t>((s + k - 1 - P) * vocab)];
      const float* draft_row = &draft[static_cast<size_t>((k - 1) * vocab)];
      const Distribution p = processed_distribution(target_row, vocab, options.sampling);
      const Distribution q = processed_distribution(draft_row, vocab, options.sampling);
      const uint64_t key = splitmix64_at(draw_base, static_cast<uint64_t>(s * 64 + k));
      const double u_draw = static_cast<double>(splitmix64_mix(key) >> 11) * 0x1.0p-53;
      const double u_accept = static_cast<double>(splitmix64_mix(key + 1) >> 11) * 0x1.0p-53;
      const PairAcceptance a =
          compare_pair(p, q, draft_row, vocab, path[static_cast<size_t>(s + k)],
                       options.draft_top_k, u_draw, u_accept);
      DepthTally& t = tally.depths[static_cast<size_t>(k - 1)];
      ++t.pairs;
      t.tv += a.tv;
      t.sampled += a.sampled_accept ? 1 : 0;
      t.top1 += a.top1_hit ? 1 : 0;
      t.top1_expected += a.top1_expected;
      t.top1_ceiling += a.top1_ceiling;
      t.topk += a.topk_hit ? 1 : 0;
      t.topk_expected += a.topk_expected;
      t.topk_ceiling += a.topk_ceiling;
      t.entropy += a.entropy;
      if (top1_run < 0 && !a.top1_hit) top1_run = k - 1;
      if (sampled_run < 0 && !a.sampled_accept) sampled_run = k - 1;
    }
    if (top1_run < 0) top1_run = depth;
    if (sampled_run < 0) sampled_run = depth;
    if (top1_runs) top1_runs->push_back(top1_run);
    if (depth == options.depth) {
      ++tally.full_roots;
      tally.top1_chain += top1_run;
      tally.sampled_chain += sampled_run;
    }
  }
  return continuation;
}

}  // namespace eagle2
