// The server's counters, gauges and histograms, rendered in Prometheus' text exposition format
// at /metrics. The scheduler records each engine step and each request's end; the HTTP layer
// records the requests it refuses. Thread-safe (one mutex; each record is a few additions).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "eagle2/engine.h"

namespace eagle2::server {

// A cumulative histogram with fixed upper bounds (Prometheus "le" buckets, +Inf implied).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value, uint64_t times = 1);
  // Appends `name`_bucket{labels,le=...}, _sum{labels} and _count{labels} lines; labels: e.g.
  // `source="head"`, or empty.
  void render(const std::string& name, std::string& out, const std::string& labels = {}) const;
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bound, not cumulative; rendered cumulatively
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  Metrics();
  // A request's end: status is the label of eagle2_requests_total ("ok", "cancelled", "error",
  // or an HTTP status the server answered with, e.g. "400", "401", "404", "413", "503").
  void request_done(const std::string& status);
  void tokens_generated(int64_t n);
  // A request's end: its tree nodes drafted and accepted per source (hybrid trees; api::Stats'
  // head_/suffix_ counts) and per depth (every speculative request). The scheduler leaves out
  // the requests whose responses it masks (--suffix-scope server: a client comparing scrapes
  // around its own request would read what its response hides).
  void draft_sources(const api::Stats& stats);
  // One engine step: its batch shape, acceptances, committed tokens and times.
  void step(const api::StepReport& report);
  void queue_depth(int64_t depth);
  void kv_blocks(int64_t used, int64_t total);
  // What admission has reserved for the admitted requests (their worst case, kv_budget.h): pool
  // blocks and drafter cache bytes.
  void kv_reserved(int64_t blocks, int64_t drafter_bytes);
  // The server-wide suffix index's size (--suffix-scope server; zeros otherwise).
  void suffix_index(const api::Engine::SuffixIndexUsage& usage);
  // The whole exposition text.
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> requests_;
  uint64_t tokens_ = 0;
  int64_t queue_depth_ = 0, kv_used_ = 0, kv_total_ = 0;
  int64_t kv_reserved_blocks_ = 0, kv_reserved_drafter_bytes_ = 0;
  double draft_seconds_ = 0, verify_seconds_ = 0;
  uint64_t sequence_forwards_ = 0, committed_ = 0;  // eagle2_tau = committed / sequence_forwards
  // Hybrid trees' nodes per source: [head, suffix].
  uint64_t source_drafted_[2] = {0, 0}, source_accepted_[2] = {0, 0};
  api::Engine::SuffixIndexUsage suffix_index_;
  Histogram batch_sequences_, batch_rows_, accepted_length_;
  // The depth of every drafted and every accepted tree node, per source: all, head, suffix.
  std::vector<Histogram> drafted_depth_, accepted_depth_;
};

}  // namespace eagle2::server
