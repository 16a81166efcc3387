#include "server/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace eagle2::server {

namespace {

// Prometheus reads any float; integers are printed as integers so that counts read naturally
// (and bucket bounds stay "1", "2", ... rather than "1.0").
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A label value in the exposition format: backslash, double quote and newline escaped.
std::string label_value(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const char* name, double value) {
  out += name;
  out += ' ';
  out += number(value);
  out += '\n';
}

std::vector<double> powers_of_two(double max) {
  std::vector<double> b;
  for (double v = 1; v <= max; v *= 2) b.push_back(v);
  return b;
}

std::vector<double> one_to(int max) {
  std::vector<double> b;
  for (int v = 1; v <= max; ++v) b.push_back(v);
  return b;
}

std::vector<double> zero_to(int max) {
  std::vector<double> b;
  for (int v = 0; v <= max; ++v) b.push_back(v);
  return b;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size(), 0) {}

void Histogram::observe(double value, uint64_t times) {
  if (times == 0) return;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      counts_[i] += times;
      break;
    }
  }
  count_ += times;  // a value above every bound lands in +Inf only
  sum_ += value * static_cast<double>(times);
}

void Histogram::render(const std::string& name, std::string& out, const std::string& labels) const {
  const std::string le = labels.empty() ? "{le=\"" : "{" + labels + ",le=\"";
  const std::string own = labels.empty() ? " " : "{" + labels + "} ";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket" + le + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket" + le + "+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum" + own + number(sum_) + "\n";
  out += name + "_count" + own + std::to_string(count_) + "\n";
}

// Batch sizes up to 64 sequences; rows up to 1024 (64 sequences' trees of up to 64 nodes would
// be 4096, but a step's budget keeps the whole forward far smaller); accepted lengths 0..12 cover
// the deepest trees the spec grammar's defaults draft.
Metrics::Metrics()
    : batch_sequences_(powers_of_two(64)),
      batch_rows_(powers_of_two(1024)),
      accepted_length_(zero_to(12)),
      // Depths 1..16: a node deeper than 16 is counted at 16 (api::Stats::kDepthBins).
      drafted_depth_(3, Histogram(one_to(api::Stats::kDepthBins))),
      accepted_depth_(3, Histogram(one_to(api::Stats::kDepthBins))) {
  // The outcomes every server has, at 0 from the start: a rate over them needs no "absent" case.
  for (const char* s : {"ok", "cancelled", "error"}) requests_[s] = 0;
}

void Metrics::request_done(const std::string& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[status];
}

void Metrics::tokens_generated(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (n > 0) tokens_ += static_cast<uint64_t>(n);
}

void Metrics::draft_sources(const api::Stats& s) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t drafted[2] = {s.head_drafted, s.suffix_drafted};
  const int64_t accepted[2] = {s.head_accepted, s.suffix_accepted};
  for (int i = 0; i < 2; ++i) {
    source_drafted_[i] += static_cast<uint64_t>(std::max<int64_t>(0, drafted[i]));
    source_accepted_[i] += static_cast<uint64_t>(std::max<int64_t>(0, accepted[i]));
  }
  for (size_t source = 0; source < 3; ++source)
    for (int b = 0; b < api::Stats::kDepthBins; ++b) {
      const double depth = b + 1;
      drafted_depth_[source].observe(
          depth, static_cast<uint64_t>(std::max<int64_t>(0, s.drafted_by_depth[source][b])));
      accepted_depth_[source].observe(
          depth, static_cast<uint64_t>(std::max<int64_t>(0, s.accepted_by_depth[source][b])));
    }
}

void Metrics::step(const api::StepReport& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  batch_sequences_.observe(static_cast<double>(r.sequences));
  batch_rows_.observe(static_cast<double>(r.rows));
  for (const int64_t a : r.accepted) accepted_length_.observe(static_cast<double>(a));
  // tau counts verifications: each verified sequence had one target forward this step.
  sequence_forwards_ += r.accepted.size();
  if (r.committed > 0) committed_ += static_cast<uint64_t>(r.committed);
  draft_seconds_ += r.draft_seconds;
  verify_seconds_ += r.forward_seconds;
}

void Metrics::suffix_index(const api::Engine::SuffixIndexUsage& usage) {
  std::lock_guard<std::mutex> lock(mutex_);
  suffix_index_ = usage;
}

void Metrics::queue_depth(int64_t depth) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_depth_ = depth;
}

void Metrics::kv_blocks(int64_t used, int64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  kv_used_ = used;
  kv_total_ = total;
}

void Metrics::kv_reserved(int64_t blocks, int64_t drafter_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  kv_reserved_blocks_ = blocks;
  kv_reserved_drafter_bytes_ = drafter_bytes;
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  header(out, "eagle2_requests_total", "counter",
         "Completion requests by how they ended: ok, cancelled, error, or the HTTP status of a "
         "refusal.");
  for (const auto& [status, n] : requests_)
    out +=
        "eagle2_requests_total{status=\"" + label_value(status) + "\"} " + std::to_string(n) + "\n";
  header(out, "eagle2_tokens_generated_total", "counter", "Tokens generated for all requests.");
  sample(out, "eagle2_tokens_generated_total", static_cast<double>(tokens_));
  header(out, "eagle2_queue_depth", "gauge", "Requests waiting for a decoding slot.");
  sample(out, "eagle2_queue_depth", static_cast<double>(queue_depth_));
  header(out, "eagle2_batch_sequences", "histogram", "Sequences in each engine step's forward.");
  batch_sequences_.render("eagle2_batch_sequences", out);
  header(out, "eagle2_batch_rows", "histogram",
         "Rows (tree nodes, single tokens, prefill tokens) in each engine step's forward.");
  batch_rows_.render("eagle2_batch_rows", out);
  header(out, "eagle2_accepted_length", "histogram",
         "Draft tokens accepted per sequence per verification.");
  accepted_length_.render("eagle2_accepted_length", out);
  header(out, "eagle2_tau", "gauge",
         "Tokens committed per sequence per target forward since start (bonus included).");
  sample(out, "eagle2_tau",
         sequence_forwards_ ? static_cast<double>(committed_) / sequence_forwards_ : 0.0);
  // The two counters behind eagle2_tau, so that a client of the metrics (bench-serve) can take
  // tau over an interval rather than since start.
  header(out, "eagle2_committed_tokens_total", "counter",
         "Tokens committed by verifications (bonus included; prefill's first token not).");
  sample(out, "eagle2_committed_tokens_total", static_cast<double>(committed_));
  header(out, "eagle2_sequence_forwards_total", "counter",
         "Verifications: one per sequence per target forward that verified it.");
  sample(out, "eagle2_sequence_forwards_total", static_cast<double>(sequence_forwards_));
  const char* sources[2] = {"head", "suffix"};
  header(out, "eagle2_drafted_tokens_by_source_total", "counter",
         "Hybrid trees' (dynamic...+suffix) nodes drafted, by source; a node both drafted counts "
         "for both.");
  for (int i = 0; i < 2; ++i)
    out += std::string("eagle2_drafted_tokens_by_source_total{source=\"") + sources[i] + "\"} " +
           std::to_string(source_drafted_[i]) + "\n";
  header(out, "eagle2_accepted_tokens_by_source_total", "counter",
         "Hybrid trees' nodes accepted, by source; a node both drafted counts for both.");
  for (int i = 0; i < 2; ++i)
    out += std::string("eagle2_accepted_tokens_by_source_total{source=\"") + sources[i] + "\"} " +
           std::to_string(source_accepted_[i]) + "\n";
  const char* depth_sources[3] = {"all", "head", "suffix"};
  header(out, "eagle2_drafted_node_depth", "histogram",
         "Depth of each drafted tree node (1: the root's children; deeper than 16 counted at "
         "16), by source: all nodes, and hybrid trees' head and suffix nodes.");
  for (size_t i = 0; i < 3; ++i)
    drafted_depth_[i].render("eagle2_drafted_node_depth", out,
                             std::string("source=\"") + depth_sources[i] + "\"");
  header(out, "eagle2_accepted_node_depth", "histogram",
         "Depth of each accepted tree node, by source as eagle2_drafted_node_depth. Buckets are "
         "cumulative: the acceptance at depth d is the ratio of the two histograms' differences "
         "of adjacent buckets (le=d minus le=d-1).");
  for (size_t i = 0; i < 3; ++i)
    accepted_depth_[i].render("eagle2_accepted_node_depth", out,
                              std::string("source=\"") + depth_sources[i] + "\"");
  header(out, "eagle2_suffix_index_bytes", "gauge",
         "The server-wide suffix index's size as its --suffix-memory bound counts it (trie "
         "nodes and kept outputs; 0 under --suffix-scope request).");
  sample(out, "eagle2_suffix_index_bytes", static_cast<double>(suffix_index_.bytes));
  header(out, "eagle2_suffix_index_documents", "gauge",
         "Requests' outputs the server-wide suffix index keeps.");
  sample(out, "eagle2_suffix_index_documents", static_cast<double>(suffix_index_.documents));
  header(out, "eagle2_suffix_index_evictions_total", "counter",
         "Outputs evicted from the server-wide suffix index, oldest first, to stay in its bound.");
  sample(out, "eagle2_suffix_index_evictions_total", static_cast<double>(suffix_index_.evictions));
  header(out, "eagle2_draft_seconds_total", "counter", "Seconds spent drafting.");
  sample(out, "eagle2_draft_seconds_total", draft_seconds_);
  header(out, "eagle2_verify_seconds_total", "counter",
         "Seconds spent in target forwards and verification.");
  sample(out, "eagle2_verify_seconds_total", verify_seconds_);
  header(out, "eagle2_kv_blocks_used", "gauge", "KV memory blocks held by sequences.");
  sample(out, "eagle2_kv_blocks_used", static_cast<double>(kv_used_));
  header(out, "eagle2_kv_blocks_total", "gauge", "KV memory blocks in the pool.");
  sample(out, "eagle2_kv_blocks_total", static_cast<double>(kv_total_));
  header(out, "eagle2_kv_blocks_reserved", "gauge",
         "KV memory blocks reserved for the admitted requests' worst case (at most the total).");
  sample(out, "eagle2_kv_blocks_reserved", static_cast<double>(kv_reserved_blocks_));
  header(out, "eagle2_kv_drafter_bytes_reserved", "gauge",
         "Bytes reserved for the admitted requests' drafter caches (EAGLE heads' KV).");
  sample(out, "eagle2_kv_drafter_bytes_reserved", static_cast<double>(kv_reserved_drafter_bytes_));
  return out;
}

}  // namespace eagle2::server
