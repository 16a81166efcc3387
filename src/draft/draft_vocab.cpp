#include "draft/draft_vocab.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"

namespace eagle2 {

namespace {
constexpr const char* kHeader = "token_id\tcount";
}  // namespace

std::vector<int32_t> ids_by_frequency(const std::vector<int64_t>& counts) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] > 0) ids.push_back(static_cast<int32_t>(i));
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return counts[a] > counts[b]; });
  return ids;
}

std::vector<int32_t> eagle3_draft_ids(const std::vector<int64_t>& counts, int64_t n) {
  const auto V = static_cast<int64_t>(counts.size());
  if (n < 1 || n > V) fail("draft vocabulary: size ", n, " is outside [1, ", V, "]");
  std::vector<int32_t> ids = ids_by_frequency(counts);
  if (static_cast<int64_t>(ids.size()) > n) ids.resize(static_cast<size_t>(n));
  std::vector<char> kept(static_cast<size_t>(V), 0);
  for (int32_t id : ids) kept[static_cast<size_t>(id)] = 1;
  for (int32_t id = 0; static_cast<int64_t>(ids.size()) < n; ++id)
    if (!kept[static_cast<size_t>(id)]) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

void write_draft_vocab(const std::string& path, const std::vector<int64_t>& counts) {
  std::ofstream out(path, std::ios::binary);
  if (!out) fail(path, ": cannot write");
  out << kHeader << "\n";
  for (int32_t id : ids_by_frequency(counts))
    out << id << "\t" << counts[static_cast<size_t>(id)] << "\n";
  if (!out) fail(path, ": write failed");
}

std::vector<int32_t> read_draft_vocab(const std::string& path, int64_t vocab_size) {
  // The hint is for the common case, a head without the file; anything else that is there but
  // cannot be read (a FIFO, a device, too large) gets the shared reader's own line.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    fail(path, ": cannot open (write it with: eagle2 draft-vocab)");
  std::istringstream in(read_regular_file(path, read_limit::kDraftVocab, "a draft_vocab.tsv"));
  std::string line;
  if (!std::getline(in, line) || line != kHeader)
    fail(path, ":1: expected the header 'token_id<TAB>count'");
  std::vector<int32_t> ids;
  std::vector<char> seen(static_cast<size_t>(std::max<int64_t>(vocab_size, 0)), 0);
  long long previous = -1;
  for (int64_t n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::istringstream s(line);
    long long id = -1, count = -1;
    std::string rest;
    if (!(s >> id >> count) || (s >> rest) || count < 1)
      fail(path, ":", n, ": expected 'token_id<TAB>count' with a positive count");
    if (id < 0 || id >= vocab_size)
      fail(path, ":", n, ": token id ", id, " outside the vocabulary of ", vocab_size);
    if (seen[static_cast<size_t>(id)]) fail(path, ":", n, ": token id ", id, " is listed twice");
    if (previous >= 0 && count > previous)
      fail(path, ":", n, ": counts must not increase (", count, " after ", previous, ")");
    seen[static_cast<size_t>(id)] = 1;
    previous = count;
    ids.push_back(static_cast<int32_t>(id));
  }
  if (ids.empty()) fail(path, ": no tokens listed");
  return ids;
}

std::vector<int32_t> draft_vocab_subset(const std::string& path, int64_t vocab_size, int64_t n) {
  std::vector<int32_t> ids = read_draft_vocab(path, vocab_size);
  if (n < 1 || n > static_cast<int64_t>(ids.size()))
    fail("--draft-vocab ", n, ": ", path, " lists ", ids.size(), " tokens (use 1 to ", ids.size(),
         ")");
  ids.resize(static_cast<size_t>(n));
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace eagle2
