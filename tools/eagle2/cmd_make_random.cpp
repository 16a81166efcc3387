// eagle2 make-random: a random-weight model of any LLaMA shape, for tests and benchmarks (no model
// can be downloaded here): a Hugging Face folder (f32, f16, bf16), or one quantized GGUF file
// (q8_0, q4_0) carrying a real SentencePiece vocabulary, so that generate and llama.cpp run it.
// --arch llama3|qwen2|qwen3: a small LLaMA-3.2 / Qwen2.5 / Qwen3-style model with the real
// tokenizer's vocabulary, as one GGUF file of any dtype (docs/ARCHITECTURES.md); --arch
// mixtral|qwen3moe: the same with a mixture of experts (--experts E --experts-used K).
#include <cstdio>
#include <map>
#include <string>

#include "bundled.h"
#include "commands.h"
#include "eagle2/error.h"
#include "eagle2/model.h"
#include "eagle2/quantize.h"
#include "flag_checks.h"

namespace eagle2::cli {

using namespace eagle2::api;

namespace {

struct MakeRandomFlags {
  std::string out;
  std::string preset;  // default "tiny"
  std::string arch;    // llama3, qwen2, qwen3, mixtral, qwen3moe: GGUF output with a tokenizer's
                       // vocabulary
  std::string dtype = "f32";
  std::string tokenizer;  // GGUF output: a tokenizer.model (default: the bundled model's), or
                          // with --arch the model's tokenizer.json
  uint64_t seed = 1;
  int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, vocab = 0;
  int64_t max_positions = 0;
  int64_t experts = 0, experts_used = 0;  // --arch mixtral|qwen3moe
  bool tie = false;
};

// Shapes of common LLaMA sizes (parameter counts with vocab 32000).
ModelConfig preset_config(const std::string& name) {
  struct Shape {
    int64_t d, I, L, H, KV, V;
  };
  static const std::map<std::string, Shape> presets = {
      {"tiny", {64, 172, 2, 8, 4, 512}},               // ~0.2 M, for tests
      {"small", {512, 1408, 8, 8, 8, 32000}},          // ~58 M
      {"llama-1b", {2048, 5632, 22, 32, 4, 32000}},    // ~1.1 B (TinyLlama shape)
      {"llama-7b", {4096, 11008, 32, 32, 32, 32000}},  // ~6.7 B (LLaMA-2-7B / Vicuna-7B shape)
  };
  auto it = presets.find(name);
  if (it == presets.end())
    fail("--preset: unknown preset '", name, "' (tiny, small, llama-1b, llama-7b)");
  const Shape& s = it->second;
  ModelConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = s.d;
  c.intermediate_size = s.I;
  c.num_layers = s.L;
  c.num_heads = s.H;
  c.num_kv_heads = s.KV;
  c.head_dim = s.d / s.H;
  c.vocab_size = s.V;
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-5f;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return c;
}

// Small models of the real architectures (each a real model's kind, at the hidden size of `tiny`),
// with the real tokenizer's vocabulary and the real models' rope, norm and tying settings.
ModelConfig arch_config(const std::string& name) {
  ModelConfig c;
  c.hidden_size = 64;
  c.intermediate_size = 192;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 16;
  c.tie_word_embeddings = true;  // as LLaMA-3.2 1B/3B, Qwen2.5 0.5B-3B and Qwen3 0.6B-4B
  if (name == "llama3") {        // LLaMA-3.2
    c.architecture = "LlamaForCausalLM";
    c.vocab_size = 128256;
    c.max_position_embeddings = 131072;
    c.rms_norm_eps = 1e-5f;
    c.rope_theta = 500000.0f;
    c.rope_scaling = RopeScaling::Llama3;
    c.rope_factor = 32.0f;
    c.rope_low_freq_factor = 1.0f;
    c.rope_high_freq_factor = 4.0f;
    c.rope_original_max_position = 8192;
    c.bos_token_id = 128000;
    c.eos_token_ids = {128001};
  } else if (name == "qwen2" || name == "qwen3") {  // Qwen2.5, Qwen3
    c.architecture = name == "qwen2" ? "Qwen2ForCausalLM" : "Qwen3ForCausalLM";
    c.vocab_size = 151936;
    c.max_position_embeddings = name == "qwen2" ? 32768 : 40960;
    c.rms_norm_eps = 1e-6f;
    c.rope_theta = 1000000.0f;
    if (name == "qwen3") c.head_dim = 32;  // Qwen3's head_dim is not hidden / heads
    c.bos_token_id = 151643;
    c.eos_token_ids = {151645};
  } else if (name == "mixtral") {  // Mixtral-8x7B's kind: LLaMA attention, 8 experts, top 2
    c.architecture = "MixtralForCausalLM";
    c.intermediate_size = 128;  // each expert's width
    c.vocab_size = 32000;       // LLaMA-2's SentencePiece vocabulary size
    c.max_position_embeddings = 32768;
    c.rms_norm_eps = 1e-5f;
    c.rope_theta = 1000000.0f;
    c.tie_word_embeddings = false;
    c.bos_token_id = 1;
    c.eos_token_ids = {2};
    c.num_experts = 8;
    c.num_experts_used = 2;
    c.norm_topk_prob = true;
  } else if (name == "qwen3moe") {  // Qwen3-30B-A3B's kind: Qwen3 attention, top 2 of 8 here
    c.architecture = "Qwen3MoeForCausalLM";
    c.vocab_size = 151936;
    c.max_position_embeddings = 40960;
    c.rms_norm_eps = 1e-6f;
    c.rope_theta = 1000000.0f;
    c.head_dim = 32;
    c.tie_word_embeddings = false;
    c.bos_token_id = 151643;
    c.eos_token_ids = {151645};
    c.num_experts = 8;
    c.num_experts_used = 2;
    c.expert_intermediate_size = 96;
    c.norm_topk_prob = true;
  } else {
    fail("--arch: '", name, "' is not one of llama3, qwen2, qwen3, mixtral, qwen3moe");
  }
  return c;
}

// --arch models: layers large enough to matter, and a final norm that sharpens the logits so
// that the top tokens stand apart (random weights otherwise give a flat distribution over 150k
// tokens, whose top entries differ by less than rounding).
constexpr RandomWeights kArchWeights{1, 0.1f, 8.0f};

int run_make_random_arch(const MakeRandomFlags& f, ModelConfig c) {
  if (!f.preset.empty()) fail("--preset: cannot be combined with --arch (--arch sets the shape)");
  if (f.tie) fail("--tie: --arch models are tied already");
  if (f.tokenizer.empty() && f.arch == "mixtral") {
    // Mixtral's vocabulary is LLaMA-2's SentencePiece one: the bundled model's stands in.
    MakeRandomFlags with_default = f;
    with_default.tokenizer = bundled_path("code-lm") + "/tokenizer.model";
    return run_make_random_arch(with_default, std::move(c));
  }
  if (f.tokenizer.empty())
    fail("--arch ", f.arch,
         ": give --tokenizer, the tokenizer.json of the model family (LLaMA-3's for llama3, "
         "Qwen's for qwen2, qwen3 and qwen3moe)");
  GgufDType dt;
  if (!parse_gguf_dtype(f.dtype, &dt))
    fail("--dtype: '", f.dtype, "' is not one of f32, f16, bf16, q8_0, q4_0");
  RandomWeights weights = kArchWeights;
  weights.seed = f.seed;
  write_random_gguf(f.out, c, dt, f.tokenizer, weights);
  std::string experts;
  if (c.num_experts > 0)
    experts = ", " + std::to_string(c.num_experts_used) + " of " + std::to_string(c.num_experts) +
              " experts";
  std::printf("wrote %s: %s, %lld layers, hidden %lld, vocab %lld%s, %s\n", f.out.c_str(),
              f.arch.c_str(), static_cast<long long>(c.num_layers),
              static_cast<long long>(c.hidden_size), static_cast<long long>(c.vocab_size),
              experts.c_str(), gguf_dtype_name(dt));
  return 0;
}

int run_make_random(const MakeRandomFlags& f) {
  const bool arch = !f.arch.empty();
  ModelConfig c = arch ? arch_config(f.arch) : preset_config(f.preset.empty() ? "tiny" : f.preset);
  if (f.hidden) c.hidden_size = f.hidden;
  if (f.intermediate) c.intermediate_size = f.intermediate;
  if (c.num_experts == 0 && (f.experts || f.experts_used))
    fail("--experts/--experts-used: only with --arch mixtral or qwen3moe");
  if (f.experts) c.num_experts = f.experts;
  if (f.experts_used) c.num_experts_used = f.experts_used;
  if (c.architecture == "Qwen3MoeForCausalLM" && f.intermediate)
    c.expert_intermediate_size = f.intermediate;  // the width that matters: no dense MLP
  if (c.num_experts_used > c.num_experts)
    fail("--experts-used (", c.num_experts_used, ") is more than --experts (", c.num_experts, ")");
  if (f.layers) c.num_layers = f.layers;
  if (f.heads) c.num_heads = f.heads;
  if (f.kv_heads) c.num_kv_heads = f.kv_heads;
  if (f.vocab) c.vocab_size = f.vocab;
  if (f.max_positions) c.max_position_embeddings = f.max_positions;
  if (!arch) c.tie_word_embeddings = f.tie;
  // An --arch shape keeps its own head_dim unless the widths are overridden.
  if (!arch || f.hidden || f.heads) {
    if (c.hidden_size % c.num_heads != 0) fail("--hidden must be a multiple of --heads");
    c.head_dim = c.hidden_size / c.num_heads;
  }
  // Round-trip through the parser so that every check a loaded config gets applies here too.
  c = parse_model_config(model_config_json(c),
                         arch ? "--arch/--hidden/..." : "--preset/--hidden/...");
  if (arch) return run_make_random_arch(f, c);
  const auto report = [&](const char* type) {
    std::printf("wrote %s: %lld layers, hidden %lld, vocab %lld, %s\n", f.out.c_str(),
                static_cast<long long>(c.num_layers), static_cast<long long>(c.hidden_size),
                static_cast<long long>(c.vocab_size), type);
  };
  QuantType qt;
  if (parse_quant_type(f.dtype, &qt)) {
    const std::string tokenizer =
        f.tokenizer.empty() ? bundled_path("code-lm") + "/tokenizer.model" : f.tokenizer;
    write_random_gguf(f.out, c, qt, f.seed, tokenizer);
    report(quant_type_name(qt));
    return 0;
  }
  // -o NAME.gguf with a float dtype: one GGUF file (the folder's values, unrounded for f32), not a
  // folder named NAME.gguf.
  GgufDType gguf_dt;
  if (f.out.ends_with(".gguf") && parse_gguf_dtype(f.dtype, &gguf_dt)) {
    const std::string tokenizer =
        f.tokenizer.empty() ? bundled_path("code-lm") + "/tokenizer.model" : f.tokenizer;
    RandomWeights weights;
    weights.seed = f.seed;
    write_random_gguf(f.out, c, gguf_dt, tokenizer, weights);
    report(gguf_dtype_name(gguf_dt));
    return 0;
  }
  if (!f.tokenizer.empty())
    fail("--tokenizer: only a GGUF model (-o NAME.gguf, or --dtype q8_0, q4_0) carries one");
  DType dt;
  if (f.dtype == "f32")
    dt = DType::F32;
  else if (f.dtype == "f16")
    dt = DType::F16;
  else if (f.dtype == "bf16")
    dt = DType::BF16;
  else
    fail("--dtype: '", f.dtype, "' is not one of f32, f16, bf16, q8_0, q4_0");
  write_random_model(f.out, c, dt, f.seed);
  report(dtype_name(dt));
  return 0;
}

}  // namespace

Command add_make_random(CLI::App& app) {
  auto f = std::make_shared<MakeRandomFlags>();
  CLI::App* cmd = app.add_subcommand(
      "make-random", "Write a random-weight model (HF folder, or a q8_0/q4_0 GGUF file)");
  cmd->add_option("-o,--out", f->out,
                  "Output folder (f32, f16, bf16), or the .gguf file to write (q8_0, q4_0; any "
                  "--dtype when it ends in .gguf)")
      ->required();
  cmd->add_option("--preset", f->preset, "tiny, small, llama-1b or llama-7b (default: tiny)");
  cmd->add_option(
      "--arch", f->arch,
      "llama3, qwen2, qwen3, mixtral or qwen3moe: a small model of that architecture with the "
      "vocabulary of --tokenizer (a tokenizer.json; mixtral: default the bundled tokenizer.model), "
      "as one GGUF file -o NAME.gguf of any --dtype");
  cmd->add_option("--dtype", f->dtype,
                  "f32, f16 or bf16 (a Hugging Face folder); q8_0 or q4_0 (one GGUF file); with "
                  "--arch any of them (one GGUF file)");
  cmd->add_option("--tokenizer", f->tokenizer,
                  "a GGUF file (q8_0/q4_0, or -o NAME.gguf): the SentencePiece tokenizer.model "
                  "whose vocabulary the GGUF file "
                  "carries, cut or padded to the vocab size (default: the bundled model's); "
                  "--arch: the model family's tokenizer.json (required)");
  cmd->add_option("--seed", f->seed, "Random seed")->check(seed_value());
  cmd->add_option("--hidden", f->hidden, "Override hidden_size")->check(integer_in(1, 1 << 16));
  cmd->add_option("--intermediate", f->intermediate,
                  "Override intermediate_size (mixtral, qwen3moe: each expert's width)")
      ->check(integer_in(1, 1 << 18));
  cmd->add_option("--experts", f->experts, "--arch mixtral|qwen3moe: experts per layer (8)")
      ->check(integer_in(1, 4096));
  cmd->add_option("--experts-used", f->experts_used,
                  "--arch mixtral|qwen3moe: experts each token is routed to (2)")
      ->check(integer_in(1, 4096));
  cmd->add_option("--layers", f->layers, "Override num_hidden_layers")->check(integer_in(1, 1024));
  cmd->add_option("--heads", f->heads, "Override num_attention_heads")->check(integer_in(1, 1024));
  cmd->add_option("--kv-heads", f->kv_heads, "Override num_key_value_heads")
      ->check(integer_in(1, 1024));
  cmd->add_option("--vocab", f->vocab, "Override vocab_size")->check(integer_in(1, 1 << 22));
  cmd->add_option("--max-positions", f->max_positions, "Override max_position_embeddings")
      ->check(integer_in(1, 1 << 24));
  cmd->add_flag("--tie", f->tie, "Tie lm_head to the embedding");
  return {cmd, [f] { return run_make_random(*f); }};
}

}  // namespace eagle2::cli
