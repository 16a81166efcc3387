#include "sampling/logits_processor.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "sampling/position_random.h"

// Semantics, and how they relate to Hugging Face's warpers (the order is HF's: temperature,
// top-k, top-p):
//
// * Top-k keeps exactly k tokens: the k largest scaled logits, ties at the cut going to the lower
//   token id. HF's TopKLogitsWarper instead keeps every token tied with the k-th value (it removes
//   scores < k-th largest), so it may keep more than k on exact ties; with real logits exact ties
//   at the cut are rare, and a fixed k with a deterministic tie rule is what the tests (and a
//   reproducible lossless verifier) need.
//
// * Top-p follows HF's TopPLogitsWarper literally: sort the surviving probabilities ascending,
//   remove every token whose ascending cumulative mass is <= 1 - top_p, but never the most likely
//   token (min_tokens_to_keep = 1). In exact arithmetic this keeps the smallest set of most likely
//   tokens whose mass reaches top_p: the removed tail is the largest low-probability suffix with
//   mass <= 1 - top_p, so the kept head has mass >= top_p, and dropping one more token would
//   leave a removable tail of mass <= 1 - top_p, contradicting maximality. Computing the rule on
//   the ascending side (as HF does) rather than "descending prefix until >= top_p" keeps rounding
//   at the boundary the same as HF's up to float32 vs double. Ties in probability are ordered by
//   token id: descending order puts the lower id first, so at the cut the lower id is kept (torch's
//   sort leaves tie order unspecified). Top-p = 1 is off, as in HF.
//
// * Masses are computed relative to the tokens kept by top-k (HF applies top-p to the top-k-masked
//   scores), which is why top-k-then-top-p can differ from top-p-then-top-k.

namespace eagle2 {

void SamplingParams::validate() const {
  if (!(temperature >= 0.0f)) fail("--temp must be >= 0 (got ", temperature, ")");
  if (std::isinf(temperature)) fail("--temp must be finite (got ", temperature, ")");
  if (!(top_p > 0.0f && top_p <= 1.0f)) fail("--top-p must be in (0, 1] (got ", top_p, ")");
  if (top_k < 0) fail("--top-k must be >= 0 (got ", top_k, ")");
}

bool Distribution::remove_and_renormalize(int32_t token) {
  if (token < 0 || static_cast<size_t>(token) >= p.size()) {
    fail("remove_and_renormalize: token ", token, " is out of range [0, ", p.size(), ")");
  }
  double remaining = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i != static_cast<size_t>(token)) remaining += p[i];
  }
  if (!(remaining > 0.0) || !std::isfinite(remaining)) return false;
  p[token] = 0.0;
  for (double& v : p) v /= remaining;
  return true;
}

void check_logits(const float* logits, int64_t n) {
  if (n <= 0) fail("the model produced an empty row of logits");
  bool any_finite = false;
  for (int64_t i = 0; i < n; ++i) {
    const float l = logits[i];
    if (std::isnan(l))
      fail("the model produced a NaN logit (token ", i,
           "): its weights or activations are not finite");
    if (l == INFINITY)
      fail("the model produced a +inf logit (token ", i,
           "): its weights or activations are not finite");
    any_finite = any_finite || l != -INFINITY;
  }
  if (!any_finite)
    fail("the model produced no finite logit (all ", n, " are -inf): no token can be chosen");
}

int32_t argmax(const float* logits, int64_t n) {
  check_logits(logits, n);
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (logits[i] > logits[best]) best = i;  // strict: the first of equal maxima wins
  return static_cast<int32_t>(best);
}

Distribution process_logits(const float* logits, int64_t n, const SamplingParams& params) {
  params.validate();
  if (params.greedy())
    fail("process_logits: temperature must be > 0 (greedy decoding uses argmax)");
  check_logits(logits, n);

  const double inv_t = 1.0 / static_cast<double>(params.temperature);
  std::vector<double> z(n);
  double zmax = -INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    z[i] = static_cast<double>(logits[i]) * inv_t;
    zmax = std::max(zmax, z[i]);
  }
  // zmax is finite: check_logits found a finite logit, and a float scaled by 1 / (a positive
  // float) stays far inside double's range.

  // Strict total order: higher score first, then lower id.
  auto before = [&z](int32_t a, int32_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); };

  std::vector<int32_t> kept;
  const int64_t k = params.top_k > 0 ? std::min<int64_t>(params.top_k, n) : n;
  if (k < n) {
    std::vector<int32_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(), before);
    kept.assign(idx.begin(), idx.begin() + k);
  } else {
    kept.resize(n);
    std::iota(kept.begin(), kept.end(), 0);
  }

  // Unnormalized softmax over the kept tokens; zmax is among them (it ranks first).
  Distribution d;
  d.p.assign(n, 0.0);
  double sum = 0.0;
  for (int32_t i : kept) {
    d.p[i] = std::exp(z[i] - zmax);
    sum += d.p[i];
  }

  if (params.top_p < 1.0f) {
    std::sort(kept.begin(), kept.end(), [&d](int32_t a, int32_t b) {
      return d.p[a] > d.p[b] || (d.p[a] == d.p[b] && a < b);
    });
    const double cut = 1.0 - static_cast<double>(params.top_p);
    double ascending = 0.0;
    // Walk from the least likely; kept[0] is never removed (keep at least one).
    for (size_t j = kept.size(); j-- > 1;) {
      ascending += d.p[kept[j]] / sum;
      if (ascending > cut) break;  // cumulative mass only grows: everything above stays
      d.p[kept[j]] = 0.0;
    }
    sum = 0.0;
    for (double v : d.p) sum += v;
  }

  for (double& v : d.p) v /= sum;
  return d;
}

int32_t sample_with(const Distribution& d, double u) {
  if (!(u >= 0.0 && u < 1.0)) fail("sample_with: the uniform number ", u, " is outside [0, 1)");
  double total = 0.0;
  for (double v : d.p) total += v;
  if (!(total > 0.0) || !std::isfinite(total))
    fail("sample: the distribution has no probability mass");
  const double target = u * total;
  double cumulative = 0.0;
  int32_t last = -1;
  for (size_t i = 0; i < d.p.size(); ++i) {
    if (!(d.p[i] > 0.0)) continue;
    cumulative += d.p[i];
    last = static_cast<int32_t>(i);
    if (target < cumulative) return last;
  }
  // Rounding can leave the walk's sum a hair below target: the answer is then the last token
  // that has mass, never a zero-probability one.
  return last;
}

int32_t sample(const Distribution& d, Rng& rng) {
  return sample_with(d, rng.uniform());
}

int32_t sample_token(const float* logits, int64_t n, const SamplingParams& params,
                     uint64_t position) {
  params.validate();
  if (params.greedy()) return argmax(logits, n);
  return sample_with(process_logits(logits, n, params), counter_uniform(params.seed, position));
}

}  // namespace eagle2
