#include "speculative/shared_suffix_index.h"

#include <algorithm>

#include "core/error.h"
#include "speculative/suffix_drafter.h"

namespace eagle2 {

namespace {

int64_t nodes_for(int64_t max_bytes) {
  if (max_bytes < SharedSuffixIndex::kMinBytes || max_bytes > (int64_t{1} << 36))
    fail("server-wide suffix index: memory must be in [1 MiB, 64 GiB] (got ", max_bytes, " bytes)");
  return std::min<int64_t>(max_bytes / SuffixIndex::kApproxNodeBytes, int64_t{1} << 30);
}

}  // namespace

SharedSuffixIndex::SharedSuffixIndex(int64_t max_bytes)
    : max_bytes_(max_bytes), max_nodes_(nodes_for(max_bytes)), index_(kDepth, max_nodes_) {}

int64_t SharedSuffixIndex::bytes_locked() const {
  return index_.nodes() * SuffixIndex::kApproxNodeBytes + document_tokens_ * 4 +
         static_cast<int64_t>(documents_.size()) * kDocumentBytes;
}

void SharedSuffixIndex::publish(std::span<const int32_t> tokens) {
  if (tokens.empty()) return;
  // At most half the cap for one document (its last tokens), so that it always fits once older
  // documents are gone, and one long answer cannot flush everything else.
  constexpr int64_t per_token = kDepth * SuffixIndex::kApproxNodeBytes + 4;  // at most
  const auto keep = static_cast<size_t>(std::max<int64_t>(1, max_bytes_ / (2 * per_token)));
  if (tokens.size() > keep) tokens = tokens.last(keep);
  const int64_t need = static_cast<int64_t>(tokens.size()) * per_token + kDocumentBytes;
  std::lock_guard lock(mutex_);
  while (!documents_.empty() && bytes_locked() + need > max_bytes_) {
    index_.remove(documents_.front());
    document_tokens_ -= static_cast<int64_t>(documents_.front().size());
    documents_.pop_front();
    ++evictions_;
  }
  while (!index_.add(tokens)) {
    if (documents_.empty()) fail("server-wide suffix index: a document does not fit (internal)");
    index_.remove(documents_.front());
    document_tokens_ -= static_cast<int64_t>(documents_.front().size());
    documents_.pop_front();
    ++evictions_;
  }
  documents_.emplace_back(tokens.begin(), tokens.end());
  document_tokens_ += static_cast<int64_t>(tokens.size());
}

int SharedSuffixIndex::draft(std::span<const int32_t> text, int max_match, int64_t budget,
                             int levels, double min_frequency, DraftTree& tree) const {
  std::lock_guard lock(mutex_);
  const int longest = std::min<int>({max_match, kDepth - 1, static_cast<int>(text.size())});
  for (int p = longest; p >= 1; --p) {
    const int32_t node = index_.find(text.last(static_cast<size_t>(p)));
    if (node < 0 || !index_.has_children(node)) continue;
    grow_suffix_tree(index_, node, budget, std::min(levels, kDepth - p), min_frequency, tree);
    return p;
  }
  return 0;
}

int64_t SharedSuffixIndex::documents() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(documents_.size());
}

int64_t SharedSuffixIndex::nodes() const {
  std::lock_guard lock(mutex_);
  return index_.nodes();
}

int64_t SharedSuffixIndex::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_locked();
}

int64_t SharedSuffixIndex::node_slots() const {
  std::lock_guard lock(mutex_);
  return index_.slots();
}

int64_t SharedSuffixIndex::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}

}  // namespace eagle2
