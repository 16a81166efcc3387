#include <algorithm>

#include "commands.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace eagle2::cli {

void add_run_flags(CLI::App& cmd, RunFlags& flags) {
  cmd.add_option("-m,--model", flags.model_dir, "Model folder (config.json + safetensors)")
      ->required();
  cmd.add_option("-t,--threads", flags.threads, "Threads (default: physical cores)")
      ->check(CLI::Range(1, 1024));
  cmd.add_option("--ctx", flags.ctx,
                 "Context size in tokens (default: min(2048, max_position_embeddings))")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
}

int resolve_threads(const RunFlags& flags) {
  return flags.threads > 0 ? flags.threads : default_thread_count();
}

int64_t resolve_ctx(const RunFlags& flags, int64_t max_positions) {
  return flags.ctx > 0 ? flags.ctx : std::min<int64_t>(2048, max_positions);
}

}  // namespace eagle2::cli
