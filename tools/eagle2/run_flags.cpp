#include <algorithm>
#include <cstdint>

#include "commands.h"
#include "eagle2/runtime.h"
#include "flag_checks.h"

namespace eagle2::cli {

void add_threads_flag(CLI::App& cmd, int& threads) {
  cmd.add_option("-t,--threads", threads, "Threads (default: physical cores)")
      ->check(thread_count());
}

void add_run_flags(CLI::App& cmd, RunFlags& flags) {
  cmd.add_option("-m,--model", flags.model_dir, "Model folder (config.json + safetensors)")
      ->required();
  add_threads_flag(cmd, flags.threads);
  cmd.add_option("--ctx", flags.ctx,
                 "Context size in tokens (default: min(2048, max_position_embeddings))")
      ->check(integer_in(1, int64_t{1} << 30));
}

void add_served_model_flags(CLI::App& cmd, std::string& model_dir, std::string& head_dir,
                            int64_t& draft_vocab) {
  cmd.add_option("-m,--model", model_dir, "Model folder (default: models/code-lm)");
  cmd.add_option("--draft", head_dir,
                 "EAGLE head folder, or none (default: models/code-lm-eagle with the bundled "
                 "model, none with -m)");
  cmd.add_option("--draft-vocab", draft_vocab,
                 "Draft only the N most frequent tokens (HEAD/draft_vocab.tsv); 0 = all "
                 "(default: 1024 when the head has a draft_vocab.tsv)")
      ->check(integer_in(0, INT32_MAX));
}

int resolve_threads(int requested) {
  // The default counts the machine's physical cores; a container may grant fewer CPUs.
  return requested > 0 ? requested : std::min(api::default_thread_count(), available_cpus());
}

int resolve_threads(const RunFlags& flags) {
  return resolve_threads(flags.threads);
}

int64_t resolve_ctx(const RunFlags& flags, int64_t max_positions) {
  return flags.ctx > 0 ? flags.ctx : std::min<int64_t>(2048, max_positions);
}

}  // namespace eagle2::cli
