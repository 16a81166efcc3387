// eagle2 cost-curve: the verify cost curve of a model on this machine (cost of a k-token batch
// relative to one token) and how close plain decoding runs to the memory-bandwidth bound.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "eagle2/cost.h"
#include "eagle2/error.h"
#include "eagle2/model.h"
#include "eagle2/parse_number.h"
#include "eagle2/runtime.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct CostCurveFlags {
  RunFlags run;
  std::string ks = "1,2,4,8,16,32,64";
  int64_t context = 128;
  int reps = 5;
  bool chain = false;
  std::string sequences;  // empty: no multi-sequence table
  std::string csv_out;    // empty: no CSV
};

// A comma-separated list of integers in [1, max], e.g. "1,2,4,8".
std::vector<int64_t> parse_counts(const std::string& text, const char* flag, const char* what,
                                  int64_t max) {
  std::vector<int64_t> ks;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<int64_t> k = parse_number<int64_t>(item);
    if (!k || *k < 1 || *k > max)
      fail(flag, ": '", item, "' is not a ", what, " in [1, ", max, "]");
    ks.push_back(*k);
  }
  if (ks.empty()) fail(flag, ": no ", what, "s given");
  return ks;
}

int run_cost_curve(const CostCurveFlags& f) {
  CostCurveOptions opt;
  opt.ks = parse_counts(f.ks, "--ks", "batch size", 4096);
  const std::vector<int64_t> sequences =
      f.sequences.empty() ? std::vector<int64_t>{}
                          : parse_counts(f.sequences, "--sequences", "sequence count", 256);
  opt.context = f.context;
  opt.repetitions = f.reps;
  opt.tree = !f.chain;
  Model model = Model::load(f.run.model_dir);
  const ModelConfig& c = model.config();
  Threads threads(resolve_threads(f.run));
  // Opened before the measurement (after the model loaded), so that an unwritable path fails at
  // once, not after minutes of timing.
  std::ofstream csv;
  if (!f.csv_out.empty()) {
    csv.open(f.csv_out, std::ios::binary);
    if (!csv) fail(f.csv_out, ": cannot write");
  }

  const double bandwidth = measure_read_bandwidth_gbs(threads, size_t{1} << 30);
  const std::vector<CostPoint> curve = measure_cost_curve(model, opt, threads);

  // Bytes one decode step must read: every weight matrix (the embedding table only when it is
  // also the lm_head) plus the keys and values of the context.
  double weight_bytes = static_cast<double>(model.weight_bytes());
  if (!c.tie_word_embeddings) weight_bytes -= static_cast<double>(model.embedding_bytes());
  const double kv_bytes = 2.0 * static_cast<double>(c.num_layers * c.num_kv_heads * c.head_dim) *
                          static_cast<double>(opt.context) * sizeof(float);
  const double bound_s = (weight_bytes + kv_bytes) / (bandwidth * 1e9);

  std::printf("model %s: %.1f M parameters, %.1f MB read per token, %d threads, kernels %s\n",
              f.run.model_dir.c_str(), static_cast<double>(model.parameter_count()) / 1e6,
              (weight_bytes + kv_bytes) / 1e6, threads.size(), kernel_name());
  std::printf("measured read bandwidth %.1f GB/s -> bound %.2f ms per token (%.1f tokens/s)\n",
              bandwidth, bound_s * 1e3, 1.0 / bound_s);
  std::printf("%6s %12s %10s %14s\n", "k", "ms/forward", "cost/k=1", "tokens/s (k)");
  for (const CostPoint& p : curve)
    std::printf("%6lld %12.3f %10.2f %14.1f\n", static_cast<long long>(p.k), p.seconds * 1e3,
                p.relative, static_cast<double>(p.k) / p.seconds);
  if (c.num_experts > 0) {
    // A mixture of experts reads the union of its rows' experts: the cost follows it, not k.
    std::printf("experts read per layer (%lld experts, %lld per token):\n",
                static_cast<long long>(c.num_experts), static_cast<long long>(c.num_experts_used));
    for (const CostPoint& p : curve)
      std::printf("%6lld %12.2f\n", static_cast<long long>(p.k), p.experts);
  }
  if (csv.is_open()) {
    // The table's figures at full precision, for scripts (scripts/bench_quantized.sh).
    csv << "k,ms_per_forward,cost_relative,tokens_per_second\n";
    char line[128];
    for (const CostPoint& p : curve) {
      std::snprintf(line, sizeof(line), "%lld,%.6f,%.6f,%.3f\n", static_cast<long long>(p.k),
                    p.seconds * 1e3, p.relative, static_cast<double>(p.k) / p.seconds);
      csv << line;
    }
    csv.flush();
    if (!csv) fail(f.csv_out, ": cannot write");
  }
  for (const CostPoint& p : curve) {
    if (p.k != 1) continue;
    std::printf("plain decoding: %.1f tokens/s = %.0f%% of the memory-bandwidth bound\n",
                1.0 / p.seconds, 100.0 * bound_s / p.seconds);
  }
  if (!sequences.empty()) {
    // B independent sequences, one token each, in one forward: what serving B requests at once
    // costs per step against serving one.
    const std::vector<CostPoint> multi = measure_sequence_cost(model, sequences, opt, threads);
    std::printf("%9s %12s %10s %14s\n", "sequences", "ms/forward", "cost/B=1", "tokens/s (B)");
    for (const CostPoint& p : multi)
      std::printf("%9lld %12.3f %10.2f %14.1f\n", static_cast<long long>(p.k), p.seconds * 1e3,
                  p.relative, static_cast<double>(p.k) / p.seconds);
  }
  return 0;
}

}  // namespace

Command add_cost_curve(CLI::App& app) {
  auto f = std::make_shared<CostCurveFlags>();
  CLI::App* cmd = app.add_subcommand(
      "cost-curve", "Measure the cost of verifying k tokens at once vs one token (benchmark)");
  add_run_flags(*cmd, f->run);
  cmd->add_option("--ks", f->ks, "Batch sizes, comma-separated");
  cmd->add_option("--context", f->context, "Committed context the batches sit on")
      ->check(integer_in(0, int64_t{1} << 20));
  cmd->add_option("--reps", f->reps, "Repetitions per batch size (median)")
      ->check(integer_in(1, 1000));
  cmd->add_flag("--chain", f->chain, "Shape batches as a chain instead of a tree");
  cmd->add_option("--sequences", f->sequences,
                  "Also time one token for each of B independent sequences in one forward, for "
                  "these B (comma-separated, e.g. 1,2,4,8), against one sequence alone");
  cmd->add_option("--csv", f->csv_out,
                  "Write the k table as CSV (k, ms_per_forward, cost_relative, tokens_per_second)");
  return {cmd, [f] { return run_cost_curve(*f); }};
}

}  // namespace eagle2::cli
