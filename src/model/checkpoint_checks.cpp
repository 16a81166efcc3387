#include "model/checkpoint_checks.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace eagle2 {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool is_ignorable_checkpoint_tensor(const std::string& name) {
  // Hugging Face LLaMA code before transformers 4.31 registered RoPE's inverse frequencies as a
  // persistent buffer, so older checkpoints (and EAGLE heads trained from them) store one per
  // layer. It is a function of head_dim and rope_theta, which the engine recomputes from
  // config.json (LlamaConfig::rope_inv_freq), so the stored copy is redundant.
  return ends_with(name, ".self_attn.rotary_emb.inv_freq");
}

const TensorView* first_unused_tensor(const std::map<std::string, TensorView>& tensors,
                                      const std::set<std::string>& used) {
  for (const auto& [name, view] : tensors)
    if (!used.count(name) && !is_ignorable_checkpoint_tensor(name)) return &view;
  return nullptr;
}

const TensorView& require_float(const TensorView& t) {
  if (!is_float_dtype(t.dtype))
    fail(t.file, ": tensor '", t.name, "' has dtype ", dtype_name(t.dtype),
         ", expected floating-point weights (F32, F16, BF16 or a quantized type)");
  return t;
}

void require_finite(const TensorView& t, const std::string& where, const std::string& name) {
  require_float(t);
  constexpr size_t kChunk = 1 << 14;
  const auto n = static_cast<size_t>(t.numel());
  std::vector<float> buf(std::min(kChunk, n));
  const auto* bytes = static_cast<const unsigned char*>(t.data);
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t len = std::min(kChunk, n - at);
    convert_to_f32(t.dtype, bytes + at * dtype_size(t.dtype), buf.data(), len);
    for (size_t i = 0; i < len; ++i)
      if (!std::isfinite(buf[i]))
        fail(where, ": tensor '", name, "' has a non-finite value (", buf[i], ") at element ",
             at + i);
  }
}

std::vector<float> to_f32(const TensorView& t) {
  require_float(t);
  std::vector<float> out(static_cast<size_t>(t.numel()));
  convert_to_f32(t.dtype, t.data, out.data(), out.size());
  return out;
}

Matrix as_matrix(const TensorView& t) {
  require_float(t);
  return Matrix{t.dtype, t.shape[0], t.shape[1], t.data};
}

DecoderProjections bind_decoder_projections(const TensorLookup& take, const std::string& prefix,
                                            int64_t d, int64_t qd, int64_t kvd, int64_t I,
                                            int64_t attn_in) {
  const int64_t in = attn_in > 0 ? attn_in : d;
  const TensorView& q = take(prefix + "self_attn.q_proj.weight", {qd, in});
  const TensorView& k = take(prefix + "self_attn.k_proj.weight", {kvd, in});
  const TensorView& v = take(prefix + "self_attn.v_proj.weight", {kvd, in});
  DecoderProjections p{.wq = as_matrix(q),
                       .wk = as_matrix(k),
                       .wv = as_matrix(v),
                       .wo = as_matrix(take(prefix + "self_attn.o_proj.weight", {d, qd})),
                       .w_gate = {},
                       .w_up = {},
                       .w_down = {}};
  if (I == 0) return p;  // a mixture-of-experts layer: its experts are bound apart
  p.w_gate = as_matrix(take(prefix + "mlp.gate_proj.weight", {I, d}));
  p.w_up = as_matrix(take(prefix + "mlp.up_proj.weight", {I, d}));
  p.w_down = as_matrix(take(prefix + "mlp.down_proj.weight", {d, I}));
  return p;
}

}  // namespace eagle2
