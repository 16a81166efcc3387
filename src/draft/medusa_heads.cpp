#include "draft/medusa_heads.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/regular_file.h"
#include "draft/matrix_quantize.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/checkpoint_checks.h"

namespace eagle2 {

namespace {

struct HeadsConfig {
  int heads = 0, layers = 0;
};

// An integer field of config.json in [lo, hi]; absent: `fallback` (< lo: required).
int64_t int_field(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi,
                  int64_t fallback, const std::string& where) {
  if (!j.contains(key)) {
    if (fallback < lo) fail(where, ": \"", key, "\" is missing");
    return fallback;
  }
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    fail(where, ": \"", key, "\" must be an integer in [", lo, ", ", hi, "] (got ", v.dump(), ")");
  return v.get<int64_t>();
}

HeadsConfig parse_config(const std::string& path, MedusaHeads::Kind kind,
                         const LlamaModel& target) {
  const std::string text = read_regular_file(path, read_limit::kJson, "a JSON config");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
  if (!j.is_object()) fail(path, ": expected a JSON object");
  const bool medusa = kind == MedusaHeads::Kind::Medusa;
  const char* own = medusa ? "medusa_num_heads" : "hydra_num_heads";
  const char* other = medusa ? "hydra_num_heads" : "medusa_num_heads";
  if (!j.contains(own) && j.contains(other))
    fail(path, ": these are ", medusa ? "Hydra" : "Medusa", " heads (\"", other, "\"), not ",
         medusa ? "Medusa" : "Hydra", " heads: use the spec ", medusa ? "hydra:DIR" : "medusa:DIR");
  if (!j.contains(own))
    fail(path, ": \"", own, "\" is missing (not a ", medusa ? "Medusa" : "Hydra", " head folder)");
  HeadsConfig c;
  c.heads = static_cast<int>(int_field(j, own, 1, MedusaHeads::kMaxHeads, 0, path));
  c.layers = static_cast<int>(int_field(j, medusa ? "medusa_num_layers" : "hydra_num_layers", 1,
                                        MedusaHeads::kMaxLayers, 0, path));
  // Sizes are the target's; when config.json states them they must agree (the one clear error
  // for heads trained on another model, before any tensor is looked at).
  const LlamaConfig& t = target.config();
  const int64_t d = int_field(j, "hidden_size", 1, INT32_MAX, t.hidden_size, path);
  if (d != t.hidden_size)
    fail(path, ": ", medusa ? "Medusa" : "Hydra", " heads of hidden_size ", d,
         " do not match the target's ", t.hidden_size);
  const int64_t V = int_field(j, "vocab_size", 1, INT32_MAX, t.vocab_size, path);
  if (V != t.vocab_size)
    fail(path, ": ", medusa ? "Medusa" : "Hydra", " heads of vocab_size ", V,
         " do not match the target's ", t.vocab_size);
  return c;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

void res_block_output(const float* z, const float* residual, int64_t residual_stride, int64_t n,
                      int64_t d, float* out) {
  for (int64_t m = 0; m < n; ++m)
    for (int64_t c = 0; c < d; ++c) {
      const float x = z[m * d + c];
      // SiLU as swiglu_inplace computes it: for x -> -inf the quotient is -0, the right limit.
      out[m * d + c] = residual[m * residual_stride + c] + x / (1.0f + std::exp(-x));
    }
}

std::unique_ptr<MedusaHeads> MedusaHeads::load(const std::string& dir, const LlamaModel& target,
                                               Kind kind) {
  const char* what = kind == Kind::Medusa ? "Medusa" : "Hydra";
  if (!std::filesystem::is_directory(dir)) fail(dir, ": ", what, " head directory not found");
  std::string weights = dir + "/model.safetensors";
  if (kind == Kind::Medusa && !std::filesystem::exists(weights) &&
      std::filesystem::exists(dir + "/medusa_lm_head.safetensors"))
    weights = dir + "/medusa_lm_head.safetensors";  // the published Medusa-1 file name
  if (!std::filesystem::exists(weights))
    fail(dir, ": no model.safetensors in the ", what, " head folder");
  std::unique_ptr<MedusaHeads> h(new MedusaHeads());
  const HeadsConfig c = parse_config(dir + "/config.json", kind, target);
  h->kind_ = kind;
  h->target_ = &target;
  h->d_ = target.config().hidden_size;
  h->vocab_ = target.config().vocab_size;
  h->layers_ = c.layers;
  h->heads_.resize(static_cast<size_t>(c.heads));
  h->store_ = std::make_unique<TensorStore>(TensorStore::open_files({weights}));
  h->bind(h->store_->tensors(), weights);
  return h;
}

int64_t MedusaHeads::input_width(int head) const {
  // (head + 2) * d <= (kMaxHeads + 1) * d: no overflow for any d below config_limits.
  return kind_ == Kind::Medusa ? d_ : static_cast<int64_t>(head + 2) * d_;
}

void MedusaHeads::bind(const std::map<std::string, TensorView>& t, const std::string& where) {
  const bool medusa = kind_ == Kind::Medusa;
  // Medusa: "medusa_head.{k}..." or the bare "{k}..." of Medusa-1's files, one or the other.
  std::string prefix = medusa ? "" : "hydra_head.";
  if (medusa)
    for (const auto& [name, view] : t)
      if (starts_with(name, "medusa_head.")) prefix = "medusa_head.";
  std::set<std::string> used;
  auto take = [&](const std::string& name, const std::vector<int64_t>& shape) -> const TensorView& {
    auto it = t.find(name);
    if (it == t.end()) fail(where, ": tensor '", name, "' not found");
    const TensorView& v = it->second;
    if (v.shape != shape)
      fail(where, ": tensor '", name, "' has shape ", shape_string(v.shape), ", expected ",
           shape_string(shape));
    if (v.dtype != DType::F32 && v.dtype != DType::F16 && v.dtype != DType::BF16)
      fail(where, ": tensor '", name, "' has dtype ", dtype_name(v.dtype),
           " (F32, F16 or BF16 expected)");
    require_finite(v, where, name);
    used.insert(name);
    n_params_ += v.numel();
    return v;
  };
  // Own lm_heads: all heads or none (the published Medusa-1 heads carry one each).
  const std::string lm0 = prefix + "0." + std::to_string(layers_) + ".weight";
  const bool own = medusa && t.count(lm0);
  for (size_t k = 0; k < heads_.size(); ++k) {
    Head& head = heads_[k];
    const std::string hp = prefix + std::to_string(k) + ".";
    head.layers.resize(static_cast<size_t>(layers_));
    for (int l = 0; l < layers_; ++l) {
      const std::string lp = hp + std::to_string(l) + ".linear.";
      const int64_t in = l == 0 ? input_width(static_cast<int>(k)) : d_;
      head.layers[static_cast<size_t>(l)].w = as_matrix(take(lp + "weight", {d_, in}));
      head.layers[static_cast<size_t>(l)].bias = to_f32(take(lp + "bias", {d_}));
    }
    if (own) head.lm_head = as_matrix(take(hp + std::to_string(layers_) + ".weight", {vocab_, d_}));
  }
  // A leftover tensor: more heads or layers than config.json says, or another architecture.
  if (const TensorView* extra = first_unused_tensor(t, used))
    fail(where, ": unexpected tensor '", extra->name, "' for ", heads_.size(), " ", kind_name(),
         " heads of ", layers_, " layer(s)", own ? " with their own lm_heads" : "");
}

void MedusaHeads::quantize_weights(DType type) {
  for (Head& head : heads_) {
    for (Layer& l : head.layers) quantize_matrix(l.w, type, quantized_);
    if (head.lm_head.rows > 0) quantize_matrix(head.lm_head, type, quantized_);
  }
}

std::string MedusaHeads::weights_dtype() const {
  return dtype_name(heads_.at(0).layers.at(0).w.dtype);
}

void MedusaHeads::states(int head, const float* input, int64_t n, float* out, Scratch& s,
                         ThreadPool& pool) const {
  if (head < 0 || head >= num_heads())
    fail("draft heads: head ", head, " of ", num_heads(), " (internal error)");
  if (n == 0) return;
  const Head& h = heads_[static_cast<size_t>(head)];
  const auto nd = static_cast<size_t>(n * d_);
  if (s.z.size() < nd) s.z.resize(nd);
  if (s.x.size() < nd) s.x.resize(nd);
  const float* x = input;
  int64_t stride = input_width(head);  // the residual is the input's first d columns (f_t)
  for (size_t l = 0; l < h.layers.size(); ++l) {
    matmul(x, n, h.layers[l].w, s.z.data(), pool);
    for (int64_t m = 0; m < n; ++m)
      for (int64_t c = 0; c < d_; ++c) s.z[static_cast<size_t>(m * d_ + c)] += h.layers[l].bias[c];
    float* y = l + 1 == h.layers.size() ? out : s.x.data();
    // In place (y == x) is fine: each element reads its own residual before writing it.
    res_block_output(s.z.data(), x, stride, n, d_, y);
    x = y;
    stride = d_;
  }
}

void MedusaHeads::logprobs(std::span<const int> heads, const float* states, float* out,
                           ThreadPool& pool) const {
  const auto n = static_cast<int64_t>(heads.size());
  if (own_lm_heads()) {
    for (int64_t i = 0; i < n; ++i)
      matmul(states + i * d_, 1, heads_.at(static_cast<size_t>(heads[i])).lm_head, out + i * vocab_,
             pool);
  } else {
    matmul(states, n, target_->lm_head(), out, pool);
  }
  // log_softmax in float32, as the EAGLE head's draft log-probs.
  for (int64_t i = 0; i < n; ++i) {
    float* row = out + i * vocab_;
    const float lse = log_sum_exp(row, vocab_);
    for (int64_t v = 0; v < vocab_; ++v) row[v] -= lse;
  }
}

}  // namespace eagle2
