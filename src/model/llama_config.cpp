#include "model/llama_config.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>

#include "core/error.h"
#include "core/regular_file.h"

namespace eagle2 {

using nlohmann::json;

namespace {

const char* type_name(const json& v) {
  // nlohmann calls every number "number"; say which kind, since "must be an integer, got number"
  // would not tell the user that 4096.5 is the problem.
  if (v.is_number_float()) return "a fractional number";
  if (v.is_number()) return "an integer";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "a list";
  return "an object";
}

// Field readers: an absent or null field gives the default (Hugging Face writes null for unset
// optional fields); a present field of the wrong type is an Error naming it.
struct Reader {
  const json& j;
  const std::string& where;

  const json* find(const char* key) const {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return nullptr;
    return &*it;
  }

  int64_t integer_value(const json& v, const char* key) const {
    if (!v.is_number_integer())
      fail(where, ": \"", key, "\" must be an integer, got ", type_name(v));
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail(where, ": \"", key, "\" is too large");
    }
    return v.get<int64_t>();
  }

  int64_t required_int(const char* key) const {
    const json* v = find(key);
    if (!v) fail(where, ": missing required field \"", key, "\"");
    return integer_value(*v, key);
  }

  int64_t optional_int(const char* key, int64_t dflt) const {
    const json* v = find(key);
    return v ? integer_value(*v, key) : dflt;
  }

  double number_value(const json& v, const char* key) const {
    if (!v.is_number()) fail(where, ": \"", key, "\" must be a number, got ", type_name(v));
    return v.get<double>();
  }

  double optional_number(const char* key, double dflt) const {
    const json* v = find(key);
    return v ? number_value(*v, key) : dflt;
  }

  bool optional_bool(const char* key, bool dflt) const {
    const json* v = find(key);
    if (!v) return dflt;
    if (!v->is_boolean()) fail(where, ": \"", key, "\" must be true or false, got ", type_name(*v));
    return v->get<bool>();
  }

  int32_t token_id(const json& v, const char* key) const {
    const bool ok =
        v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > 0x7fffffffu) &&
        v.get<int64_t>() >= 0 && v.get<int64_t>() <= std::numeric_limits<int32_t>::max();
    if (!ok) fail(where, ": \"", key, "\" must be a token id (an integer from 0 to 2147483647)");
    return static_cast<int32_t>(v.get<int64_t>());
  }
};

// Every integer size goes through here: positive, and at most its limit from config_limits.
void require_size(const std::string& where, const char* key, int64_t v, int64_t limit) {
  if (v <= 0) fail(where, ": \"", key, "\" must be positive, got ", v);
  if (v > limit) fail(where, ": \"", key, "\" is ", v, ", more than the supported maximum ", limit);
}

// a * b must not exceed `limit`; the multiplication itself is checked, so that no pair of values,
// however large, can wrap around to a plausible product.
void require_product(const std::string& where, const char* a_key, int64_t a, const char* b_key,
                     int64_t b, int64_t limit, const char* what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > limit) {
    fail(where, ": ", a_key, " (", a, ") * ", b_key, " (", b, ") is more than ", limit,
         ", the supported maximum ", what);
  }
}

void require_positive(const std::string& where, const char* key, double v) {
  // The negated comparison also catches NaN.
  if (!(v > 0) || !std::isfinite(v)) fail(where, ": \"", key, "\" must be positive, got ", v);
}

// A float written as the shortest decimal that reads back to the same float, so that to_json
// writes "1e-05" rather than the double expansion 9.999999747378752e-06 of 1e-5f.
double shortest(float f) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  *end = '\0';
  return std::strtod(buf, nullptr);
}

void parse_rope_scaling(const Reader& r, LlamaConfig& c) {
  const json* rs = r.find("rope_scaling");
  if (!rs) return;
  const std::string& where = r.where;
  if (!rs->is_object()) fail(where, ": \"rope_scaling\" must be an object or null");
  // Newer Hugging Face configs say "rope_type", older ones "type"; both mean the same.
  auto t = rs->find("rope_type");
  if (t == rs->end() || t->is_null()) t = rs->find("type");
  if (t == rs->end() || t->is_null())
    fail(where, ": rope_scaling has no \"rope_type\" or \"type\"");
  if (!t->is_string()) fail(where, ": rope_scaling type must be a string");
  const std::string type = t->get<std::string>();
  const Reader sub{*rs, where};
  auto need_number = [&](const char* key) {
    const json* v = sub.find(key);
    if (!v) fail(where, ": rope_scaling type '", type, "' needs \"", key, "\"");
    const double x = sub.number_value(*v, key);
    const float xf = static_cast<float>(x);
    if (!(xf > 0) || !std::isfinite(xf)) {
      fail(where, ": rope_scaling \"", key, "\" must be positive, got ", x);
    }
    return x;
  };
  if (type == "default") return;
  if (type == "linear") {
    c.rope_scaling = RopeScaling::Linear;
    c.rope_factor = static_cast<float>(need_number("factor"));
    return;
  }
  if (type == "llama3") {
    c.rope_scaling = RopeScaling::Llama3;
    c.rope_factor = static_cast<float>(need_number("factor"));
    c.rope_low_freq_factor = static_cast<float>(need_number("low_freq_factor"));
    c.rope_high_freq_factor = static_cast<float>(need_number("high_freq_factor"));
    const json* omp = sub.find("original_max_position_embeddings");
    if (!omp) {
      fail(where, ": rope_scaling type 'llama3' needs \"original_max_position_embeddings\"");
    }
    c.rope_original_max_position = sub.integer_value(*omp, "original_max_position_embeddings");
    require_size(where, "original_max_position_embeddings", c.rope_original_max_position,
                 config_limits::kMaxPositions);
    // The smoothing divides by (high - low); Hugging Face refuses the same configs.
    if (!(c.rope_low_freq_factor < c.rope_high_freq_factor)) {
      fail(where, ": rope_scaling llama3 needs low_freq_factor (", c.rope_low_freq_factor,
           ") < high_freq_factor (", c.rope_high_freq_factor, ")");
    }
    return;
  }
  fail(where, ": rope_scaling type '", type, "' is not supported (supported: linear, llama3)");
}

// The experts of Mixtral and Qwen3-MoE; every size checked as the dense ones are, so that the
// stacked expert matrices (experts x width x hidden) stay inside kMaxMatrixElements.
void parse_moe(const Reader& r, LlamaConfig& c) {
  const bool mixtral = c.architecture == "MixtralForCausalLM";
  if (!mixtral && c.architecture != "Qwen3MoeForCausalLM") return;
  const std::string& where = r.where;
  using namespace config_limits;
  const char* experts_key = mixtral ? "num_local_experts" : "num_experts";
  c.num_experts = r.required_int(experts_key);
  require_size(where, experts_key, c.num_experts, kMaxExperts);
  c.num_experts_used = r.required_int("num_experts_per_tok");
  require_size(where, "num_experts_per_tok", c.num_experts_used, kMaxExpertsUsed);
  if (c.num_experts_used > c.num_experts)
    fail(where, ": num_experts_per_tok (", c.num_experts_used, ") is more than ", experts_key, " (",
         c.num_experts, ")");
  c.expert_intermediate_size =
      mixtral ? c.intermediate_size : r.required_int("moe_intermediate_size");
  require_size(where, "moe_intermediate_size", c.expert_intermediate_size, kMaxWidth);
  require_product(where, experts_key, c.num_experts, "moe_intermediate_size * hidden_size",
                  c.expert_intermediate_size * c.hidden_size, kMaxMatrixElements,
                  "size of one layer's stacked experts");
  // Mixtral's softmax over the top-k router logits is the top-k probabilities renormalised.
  c.norm_topk_prob = mixtral || r.optional_bool("norm_topk_prob", false);
  if (!mixtral) {
    // Qwen3-MoE checkpoints may keep dense MLPs in some layers; none published does.
    if (r.optional_int("decoder_sparse_step", 1) != 1)
      fail(where, ": decoder_sparse_step other than 1 (dense MLP layers) is not supported");
    if (const json* dense = r.find("mlp_only_layers");
        dense && !(dense->is_array() && dense->empty()))
      fail(where, ": mlp_only_layers (dense MLP layers) is not supported");
  }
}

}  // namespace

LlamaConfig LlamaConfig::parse(const std::string& json_text, const std::string& where) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail(where, ": not valid JSON (parse error at byte ", e.byte, ")");
  } catch (const json::exception& e) {
    fail(where, ": not valid JSON (", e.what(), ")");
  }
  if (!j.is_object()) fail(where, ": not a JSON object");

  LlamaConfig c;
  const Reader r{j, where};
  try {
    // Qwen2 and Qwen3 are LLaMA decoders plus q/k/v biases (Qwen2) or a per-head RMSNorm of q
    // and k before RoPE (Qwen3); everything else (SwiGLU MLP, rotate-half RoPE, RMSNorm) is shared.
    static const std::pair<const char*, const char*> kArchitectures[] = {
        {"LlamaForCausalLM", "llama"},     {"MistralForCausalLM", "mistral"},
        {"Qwen2ForCausalLM", "qwen2"},     {"Qwen3ForCausalLM", "qwen3"},
        {"MixtralForCausalLM", "mixtral"}, {"Qwen3MoeForCausalLM", "qwen3_moe"},
    };
    if (const json* archs = r.find("architectures")) {
      if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
        fail(where, ": \"architectures\" must be a non-empty list of strings");
      }
      c.architecture = (*archs)[0].get<std::string>();
      bool known = false;
      for (const auto& [name, type] : kArchitectures) known = known || c.architecture == name;
      if (!known) {
        fail(where, ": unsupported architecture '", c.architecture,
             "' (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
             "Qwen3ForCausalLM, MixtralForCausalLM, Qwen3MoeForCausalLM)");
      }
    } else if (const json* mt = r.find("model_type")) {
      const std::string t = mt->is_string() ? mt->get<std::string>() : std::string();
      for (const auto& [name, type] : kArchitectures)
        if (t == type) c.architecture = name;
      if (c.architecture.empty())
        fail(where, ": unsupported model_type '", mt->is_string() ? t : mt->dump(),
             "' (supported: llama, mistral, qwen2, qwen3, mixtral, qwen3_moe)");
    } else {
      fail(where, ": neither \"architectures\" nor \"model_type\" is given");
    }
    c.qkv_bias = c.architecture == "Qwen2ForCausalLM";
    c.qk_norm = c.architecture == "Qwen3ForCausalLM" || c.architecture == "Qwen3MoeForCausalLM";

    if (const json* act = r.find("hidden_act")) {
      if (!act->is_string() || act->get<std::string>() != "silu") {
        fail(where, ": hidden_act ", act->dump(), " is not supported (only \"silu\")");
      }
    }

    c.hidden_size = r.required_int("hidden_size");
    c.intermediate_size = r.required_int("intermediate_size");
    c.num_layers = r.required_int("num_hidden_layers");
    c.num_heads = r.required_int("num_attention_heads");
    c.vocab_size = r.required_int("vocab_size");
    using namespace config_limits;
    require_size(where, "hidden_size", c.hidden_size, kMaxWidth);
    require_size(where, "intermediate_size", c.intermediate_size, kMaxWidth);
    require_size(where, "num_hidden_layers", c.num_layers, kMaxLayers);
    require_size(where, "num_attention_heads", c.num_heads, kMaxHeads);
    require_size(where, "vocab_size", c.vocab_size, kMaxVocab);

    c.num_kv_heads = r.optional_int("num_key_value_heads", c.num_heads);
    require_size(where, "num_key_value_heads", c.num_kv_heads, kMaxHeads);
    if (c.num_heads % c.num_kv_heads != 0) {
      fail(where, ": num_attention_heads (", c.num_heads,
           ") is not a multiple of num_key_value_heads (", c.num_kv_heads, ")");
    }
    if (r.find("head_dim")) {
      c.head_dim = r.required_int("head_dim");
      require_size(where, "head_dim", c.head_dim, kMaxWidth);
    } else {
      if (c.hidden_size % c.num_heads != 0) {
        fail(where, ": hidden_size (", c.hidden_size, ") is not divisible by num_attention_heads (",
             c.num_heads, ") and no head_dim is given");
      }
      c.head_dim = c.hidden_size / c.num_heads;
    }
    // RoPE rotates pairs of dimensions.
    if (c.head_dim % 2 != 0) fail(where, ": head_dim (", c.head_dim, ") must be even for RoPE");
    // The products the weights and buffers are sized by. The key/value width needs no check of its
    // own: num_key_value_heads divides num_attention_heads, so it is at most the query width.
    require_product(where, "num_attention_heads", c.num_heads, "head_dim", c.head_dim, kMaxWidth,
                    "projection width");
    require_product(where, "num_hidden_layers", c.num_layers, "num_key_value_heads * head_dim",
                    c.num_kv_heads * c.head_dim, kMaxKvWidth, "key/value width of all layers");
    require_product(where, "vocab_size", c.vocab_size, "hidden_size", c.hidden_size,
                    kMaxMatrixElements, "embedding size");

    parse_moe(r, c);

    c.max_position_embeddings = r.optional_int("max_position_embeddings", 2048);
    require_size(where, "max_position_embeddings", c.max_position_embeddings, kMaxPositions);

    const double eps = r.optional_number("rms_norm_eps", 1e-6);
    require_positive(where, "rms_norm_eps", eps);
    c.rms_norm_eps = static_cast<float>(eps);
    const double theta = r.optional_number("rope_theta", 10000.0);
    require_positive(where, "rope_theta", theta);
    c.rope_theta = static_cast<float>(theta);
    // Positive doubles can still round to 0 or inf as floats.
    if (!(c.rms_norm_eps > 0)) fail(where, ": \"rms_norm_eps\" (", eps, ") is out of float range");
    if (!std::isfinite(c.rope_theta)) {
      fail(where, ": \"rope_theta\" (", theta, ") is out of float range");
    }
    parse_rope_scaling(r, c);

    c.tie_word_embeddings = r.optional_bool("tie_word_embeddings", false);
    c.attention_bias = r.optional_bool("attention_bias", false);
    if (c.attention_bias) {
      fail(where, ": attention_bias=true (biases on the attention projections) is not supported");
    }
    if (r.optional_bool("mlp_bias", false)) {
      fail(where, ": mlp_bias=true (biases on the MLP projections) is not supported");
    }

    if (const json* bos = r.find("bos_token_id")) c.bos_token_id = r.token_id(*bos, "bos_token_id");
    if (const json* eos = r.find("eos_token_id")) {
      if (eos->is_array()) {
        if (eos->empty()) fail(where, ": \"eos_token_id\" is an empty list");
        for (const json& e : *eos) c.eos_token_ids.push_back(r.token_id(e, "eos_token_id"));
      } else {
        c.eos_token_ids.push_back(r.token_id(*eos, "eos_token_id"));
      }
    } else {
      c.eos_token_ids = {2};
    }

    // Qwen configs carry a sliding_window size even when use_sliding_window is false.
    const bool qwen = c.qkv_bias || c.qk_norm;
    const bool window_used = !qwen || r.optional_bool("use_sliding_window", false);
    if (qwen && window_used)
      fail(where, ": use_sliding_window=true (Qwen's per-layer sliding windows) is not supported");
    if (const json* sw = r.find("sliding_window"); sw && window_used && !sw->is_null()) {
      c.sliding_window = r.integer_value(*sw, "sliding_window");
      require_size(where, "sliding_window", *c.sliding_window, config_limits::kMaxPositions);
    }
  } catch (const json::exception& e) {
    // Defensive: accesses are type-checked first, but nothing from a hostile file may escape as
    // anything other than an Error.
    fail(where, ": malformed config (", e.what(), ")");
  }
  return c;
}

LlamaConfig LlamaConfig::load(const std::string& path) {
  return parse(read_regular_file(path, read_limit::kJson, "a JSON config"), path);
}

std::string LlamaConfig::to_json() const {
  nlohmann::ordered_json j;
  j["architectures"] = {architecture};
  j["model_type"] = architecture == "MistralForCausalLM"    ? "mistral"
                    : architecture == "Qwen2ForCausalLM"    ? "qwen2"
                    : architecture == "Qwen3ForCausalLM"    ? "qwen3"
                    : architecture == "MixtralForCausalLM"  ? "mixtral"
                    : architecture == "Qwen3MoeForCausalLM" ? "qwen3_moe"
                                                            : "llama";
  j["hidden_size"] = hidden_size;
  j["intermediate_size"] = intermediate_size;
  j["num_hidden_layers"] = num_layers;
  j["num_attention_heads"] = num_heads;
  j["num_key_value_heads"] = num_kv_heads;
  j["head_dim"] = head_dim;
  j["vocab_size"] = vocab_size;
  j["max_position_embeddings"] = max_position_embeddings;
  j["rms_norm_eps"] = shortest(rms_norm_eps);
  j["rope_theta"] = shortest(rope_theta);
  switch (rope_scaling) {
    case RopeScaling::None:
      j["rope_scaling"] = nullptr;
      break;
    case RopeScaling::Linear:
      j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", shortest(rope_factor)}};
      break;
    case RopeScaling::Llama3:
      j["rope_scaling"] = {{"rope_type", "llama3"},
                           {"factor", shortest(rope_factor)},
                           {"low_freq_factor", shortest(rope_low_freq_factor)},
                           {"high_freq_factor", shortest(rope_high_freq_factor)},
                           {"original_max_position_embeddings", rope_original_max_position}};
      break;
  }
  if (architecture == "MixtralForCausalLM") {
    j["num_local_experts"] = num_experts;
    j["num_experts_per_tok"] = num_experts_used;
  } else if (architecture == "Qwen3MoeForCausalLM") {
    j["num_experts"] = num_experts;
    j["num_experts_per_tok"] = num_experts_used;
    j["moe_intermediate_size"] = expert_intermediate_size;
    j["norm_topk_prob"] = norm_topk_prob;
  }
  j["hidden_act"] = "silu";
  j["attention_bias"] = attention_bias;
  j["tie_word_embeddings"] = tie_word_embeddings;
  j["bos_token_id"] = bos_token_id;
  if (eos_token_ids.size() == 1)
    j["eos_token_id"] = eos_token_ids[0];
  else
    j["eos_token_id"] = eos_token_ids;
  if (sliding_window)
    j["sliding_window"] = *sliding_window;
  else
    j["sliding_window"] = nullptr;
  return j.dump(2) + "\n";
}

std::vector<float> LlamaConfig::rope_inv_freq() const {
  // Mirrors Hugging Face's float32 arithmetic step by step (torch promotes the Python scalars to
  // float32 before each elementwise op), so positions rotate by the same angles as the reference.
  const int64_t half = head_dim / 2;
  std::vector<float> inv(static_cast<size_t>(half));
  const float dim = static_cast<float>(head_dim);
  for (int64_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / dim;
    inv[static_cast<size_t>(i)] = 1.0f / powf(rope_theta, exponent);
  }
  if (!rope_freq_factors.empty()) {
    for (size_t i = 0; i < inv.size() && i < rope_freq_factors.size(); ++i)
      inv[i] /= rope_freq_factors[i];
  }
  if (rope_scaling == RopeScaling::Linear) {
    for (float& f : inv) f /= rope_factor;
  } else if (rope_scaling == RopeScaling::Llama3) {
    const double old_len = static_cast<double>(rope_original_max_position);
    // Python computes these two thresholds and the denominator in double; the comparisons and the
    // division then see them rounded to float32.
    const float low_freq_wavelen = static_cast<float>(old_len / rope_low_freq_factor);
    const float high_freq_wavelen = static_cast<float>(old_len / rope_high_freq_factor);
    const float denom =
        static_cast<float>(static_cast<double>(rope_high_freq_factor) - rope_low_freq_factor);
    const float two_pi = static_cast<float>(2 * std::numbers::pi);
    const float old_len_f = static_cast<float>(old_len);
    for (float& f : inv) {
      const float wavelen = two_pi / f;
      if (wavelen > low_freq_wavelen) {
        f = f / rope_factor;
      } else if (!(wavelen < high_freq_wavelen)) {
        const float smooth = (old_len_f / wavelen - rope_low_freq_factor) / denom;
        f = (1.0f - smooth) * f / rope_factor + smooth * f;
      }
    }
  }
  return inv;
}

}  // namespace eagle2
