// eagle2 info: what a model folder holds and what running it costs in memory.
#include <cstdio>
#include <filesystem>
#include <string>

#include "commands.h"
#include "eagle2/model.h"
#include "eagle2/tokenizer.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

int run_info(const RunFlags& f) {
  const Model model = Model::load(f.model_dir);
  const ModelConfig& c = model.config();
  const int64_t ctx = resolve_ctx(f, c.max_position_embeddings);
  const double mib = 1024.0 * 1024.0;
  const double kv_bytes = 2.0 * static_cast<double>(c.num_layers * c.num_kv_heads * c.head_dim) *
                          static_cast<double>(ctx) * sizeof(float);
  std::string dtypes;
  for (const auto& d : model.weight_dtypes()) dtypes += (dtypes.empty() ? "" : ", ") + d;
  std::printf("model          %s\n", f.model_dir.c_str());
  std::printf("architecture   %s\n", c.architecture.c_str());
  std::printf("parameters     %lld (%.2f M)\n", static_cast<long long>(model.parameter_count()),
              static_cast<double>(model.parameter_count()) / 1e6);
  std::printf("dtypes         %s\n", dtypes.c_str());
  std::printf("layers         %lld\n", static_cast<long long>(c.num_layers));
  std::printf("hidden         %lld (intermediate %lld)\n", static_cast<long long>(c.hidden_size),
              static_cast<long long>(c.intermediate_size));
  std::printf("heads          %lld query, %lld key/value, head_dim %lld\n",
              static_cast<long long>(c.num_heads), static_cast<long long>(c.num_kv_heads),
              static_cast<long long>(c.head_dim));
  std::printf("vocab          %lld%s\n", static_cast<long long>(c.vocab_size),
              c.tie_word_embeddings ? " (lm_head tied to the embedding)" : "");
  std::printf("rope           theta %g, scaling %s", static_cast<double>(c.rope_theta),
              rope_scaling_name(c.rope_scaling));
  if (c.rope_scaling != RopeScaling::None)
    std::printf(" (factor %g)", static_cast<double>(c.rope_factor));
  std::printf("\nmax positions  %lld%s\n", static_cast<long long>(c.max_position_embeddings),
              c.sliding_window
                  ? (" (sliding window " + std::to_string(*c.sliding_window) + ")").c_str()
                  : "");
  std::printf("memory         weights %.1f MiB (memory-mapped), KV cache %.1f MiB at --ctx %lld\n",
              static_cast<double>(model.weight_bytes()) / mib, kv_bytes / mib,
              static_cast<long long>(ctx));
  const std::string tok_path = f.model_dir + "/tokenizer.model";
  if (f.model_dir.ends_with(".gguf")) {
    const Tokenizer tok = Tokenizer::open(f.model_dir);
    std::printf("tokenizer      GGUF vocabulary, %d pieces (bos %d, eos %d)\n", tok.vocab_size(),
                tok.bos_id(), tok.eos_id());
  } else if (std::filesystem::exists(tok_path)) {
    const Tokenizer tok = Tokenizer::load(tok_path);
    std::printf("tokenizer      SentencePiece, %d pieces (bos %d, eos %d)\n", tok.vocab_size(),
                tok.bos_id(), tok.eos_id());
  } else {
    std::printf("tokenizer      none (use --ids)\n");
  }
  return 0;
}

}  // namespace

Command add_info(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("info", "Print a model's architecture, size and memory use");
  add_run_flags(*cmd, *f);
  return {cmd, [f] { return run_info(*f); }};
}

}  // namespace eagle2::cli
