#include "support/random_models.h"

#include <filesystem>

#include "model/random_model.h"
#include "support/shared_data.h"

namespace eagle2::test {

LlamaConfig tiny_config() {
  LlamaConfig c;
  c.architecture = "LlamaForCausalLM";
  c.hidden_size = 64;
  c.intermediate_size = 96;
  c.num_layers = 2;
  c.num_heads = 8;
  c.num_kv_heads = 4;
  c.head_dim = 8;
  c.vocab_size = 96;
  c.max_position_embeddings = 512;
  c.rms_norm_eps = 1e-5f;
  c.bos_token_id = 1;
  c.eos_token_ids = {2};
  return c;
}

std::unique_ptr<LlamaModel> load_random_model(const std::string& name, const LlamaConfig& cfg,
                                              DType dtype, uint64_t seed, float init_std) {
  const std::string dir = temp_dir("model-" + name);
  write_random_model(dir, cfg, dtype, seed, init_std);
  return LlamaModel::load(dir);
}

}  // namespace eagle2::test
