#include "server/metrics.h"

#include <cstdio>

namespace eagle2::server {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::vector<double> powers_of_two(double last) {
  std::vector<double> b;
  for (double x = 1; x <= last; x *= 2) b.push_back(x);
  return b;
}

std::vector<double> zero_to(int last) {
  std::vector<double> b;
  for (int i = 0; i <= last; ++i) b.push_back(i);
  return b;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size(), 0) {}

void Histogram::observe(double value) {
  for (size_t i = 0; i < bounds_.size(); ++i)
    if (value <= bounds_[i]) {
      ++counts_[i];
      break;
    }
  ++count_;
  sum_ += value;
}

void Histogram::render(const std::string& name, std::string& out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : batch_sequences_(powers_of_two(64)),
      batch_rows_(powers_of_two(1024)),
      accepted_length_(zero_to(12)) {}

void Metrics::request_done(const std::string& status) {
  std::lock_guard lock(mutex_);
  ++requests_[status];
}

void Metrics::tokens_generated(int64_t n) {
  std::lock_guard lock(mutex_);
  tokens_ += static_cast<uint64_t>(n);
}

void Metrics::step(const StepRecord& r) {
  std::lock_guard lock(mutex_);
  batch_sequences_.observe(static_cast<double>(r.sequences));
  batch_rows_.observe(static_cast<double>(r.rows));
  for (int64_t a : r.accepted) accepted_length_.observe(static_cast<double>(a));
  sequence_forwards_ += r.accepted.size();
  committed_ += static_cast<uint64_t>(r.committed);
  draft_seconds_ += r.draft_seconds;
  verify_seconds_ += r.verify_seconds;
  kv_used_ = r.kv_blocks_used;
}

void Metrics::queue_depth(int64_t depth) {
  std::lock_guard lock(mutex_);
  queue_depth_ = depth;
}

void Metrics::kv_blocks(int64_t used, int64_t total) {
  std::lock_guard lock(mutex_);
  kv_used_ = used;
  kv_total_ = total;
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  header(out, "eagle2_requests_total", "counter", "Requests by outcome (ok, cancelled, error, or the HTTP status of a refusal).");
  if (requests_.empty()) out += "eagle2_requests_total{status=\"ok\"} 0\n";
  for (const auto& [status, n] : requests_)
    out += "eagle2_requests_total{status=\"" + status + "\"} " + std::to_string(n) + "\n";
  header(out, "eagle2_tokens_generated_total", "counter", "Tokens generated for all requests.");
  out += "eagle2_tokens_generated_total " + std::to_string(tokens_) + "\n";
  header(out, "eagle2_queue_depth", "gauge", "Requests waiting for a decoding slot.");
  out += "eagle2_queue_depth " + std::to_string(queue_depth_) + "\n";
  header(out, "eagle2_batch_sequences", "histogram", "Sequences in each step's target forward.");
  batch_sequences_.render("eagle2_batch_sequences", out);
  header(out, "eagle2_batch_rows", "histogram", "Rows (tree nodes, tokens, prompt chunks) in each step's target forward.");
  batch_rows_.render("eagle2_batch_rows", out);
  header(out, "eagle2_accepted_length", "histogram", "Draft tokens accepted per sequence per step.");
  accepted_length_.render("eagle2_accepted_length", out);
  header(out, "eagle2_tau", "gauge", "Tokens committed per sequence per target forward since start (bonus included).");
  out += "eagle2_tau " +
         number(sequence_forwards_ ? static_cast<double>(committed_) /
                                         static_cast<double>(sequence_forwards_)
                                   : 0.0) +
         "\n";
  header(out, "eagle2_draft_seconds_total", "counter", "Seconds spent drafting.");
  out += "eagle2_draft_seconds_total " + number(draft_seconds_) + "\n";
  header(out, "eagle2_verify_seconds_total", "counter", "Seconds spent in target forwards and verification.");
  out += "eagle2_verify_seconds_total " + number(verify_seconds_) + "\n";
  header(out, "eagle2_kv_blocks_used", "gauge", "KV cache blocks held by sequences.");
  out += "eagle2_kv_blocks_used " + std::to_string(kv_used_) + "\n";
  header(out, "eagle2_kv_blocks_total", "gauge", "KV cache blocks in the pool.");
  out += "eagle2_kv_blocks_total " + std::to_string(kv_total_) + "\n";
  return out;
}

}  // namespace eagle2::server
