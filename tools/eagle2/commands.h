// The eagle2 command line: one file per subcommand, each registering its options on the app and
// returning the action to run once parsing succeeded.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace eagle2::cli {

// A subcommand and what it does once its flags are parsed (returns the exit code).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_demo(CLI::App& app);
Command add_generate(CLI::App& app);
Command add_info(CLI::App& app);
Command add_make_random(CLI::App& app);
Command add_quantize(CLI::App& app);
Command add_cost_curve(CLI::App& app);
Command add_bench(CLI::App& app);
Command add_train_lm(CLI::App& app);
Command add_train_head(CLI::App& app);
Command add_draft_vocab(CLI::App& app);
Command add_chat_template(CLI::App& app);
Command add_tokenize(CLI::App& app);
Command add_serve(CLI::App& app);
Command add_bench_serve(CLI::App& app);
Command add_perplexity(CLI::App& app);
Command add_logprobs(CLI::App& app);
Command add_acceptance(CLI::App& app);

// Flags shared by the commands that run a model.
struct RunFlags {
  std::string model_dir;
  int threads = 0;  // 0 = default_thread_count()
  int64_t ctx = 0;  // 0 = min(2048, max_position_embeddings)
};
void add_run_flags(CLI::App& cmd, RunFlags& flags);
// -m, --draft and --draft-vocab of the serving commands (serve, bench-serve): both optional, the
// bundled model and head by default (bundled.h: model_and_head).
void add_served_model_flags(CLI::App& cmd, std::string& model_dir, std::string& head_dir,
                            int64_t& draft_vocab);
// -t/--threads, bounded by the CPUs this process may use (flag_checks.h).
void add_threads_flag(CLI::App& cmd, int& threads);
// The thread count to run with: the flag's, else the default, never more than the CPUs.
int resolve_threads(int requested);
int resolve_threads(const RunFlags& flags);
int64_t resolve_ctx(const RunFlags& flags, int64_t max_positions);

}  // namespace eagle2::cli
