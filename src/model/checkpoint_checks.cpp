#include "model/checkpoint_checks.h"

#include "core/error.h"

namespace eagle2 {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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

void require_one_dtype(const std::vector<const TensorView*>& group) {
  if (group.empty()) return;
  const TensorView& first = *group.front();
  for (const TensorView* t : group) {
    if (t->dtype != first.dtype) {
      fail(t->file, ": tensor '", t->name, "' has dtype ", dtype_name(t->dtype), ", but '",
           first.name, "' has ", dtype_name(first.dtype),
           " (the projections computed together from one input must share a dtype)");
    }
  }
}

}  // namespace eagle2
