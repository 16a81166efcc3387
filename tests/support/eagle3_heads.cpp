#include "support/eagle3_heads.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>

#include "io/safetensors.h"
#include "support/shared_data.h"

namespace eagle2::test {

HeadTensor* HeadFiles::find(const std::string& name) {
  for (HeadTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

void HeadFiles::remove(const std::string& name) {
  std::erase_if(tensors, [&](const HeadTensor& t) { return t.name == name; });
}

HeadFiles random_eagle3_head(const LlamaModel& target, const Eagle3HeadOptions& o) {
  const LlamaConfig& tc = target.config();
  LlamaConfig c = tc;
  c.num_layers = 1;
  c.tie_word_embeddings = false;
  if (o.intermediate > 0) c.intermediate_size = o.intermediate;
  if (o.num_heads > 0) c.num_heads = o.num_heads;
  if (o.num_kv_heads > 0) c.num_kv_heads = o.num_kv_heads;
  const int64_t V = c.vocab_size, N = o.draft_vocab > 0 ? o.draft_vocab : V / 2;
  HeadFiles f;
  f.config = nlohmann::json::parse(c.to_json());
  f.config["architectures"] = {"LlamaForCausalLMEagle3"};
  f.config["draft_vocab_size"] = N;
  if (!o.aux_layers.empty()) f.config["eagle_aux_hidden_state_layer_ids"] = o.aux_layers;

  const int64_t d = c.hidden_size, hd = c.head_dim, I = c.intermediate_size;
  const int64_t qd = c.num_heads * hd, kvd = c.num_kv_heads * hd;
  const int64_t layers = o.aux_layers.empty() ? 3 : static_cast<int64_t>(o.aux_layers.size());
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float mean, float std) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    HeadTensor t{name, DType::F32, shape, std::vector<unsigned char>(static_cast<size_t>(n) * 4)};
    for (int64_t i = 0; i < n; ++i) t.f32()[i] = mean + std * normal(rng);
    f.tensors.push_back(std::move(t));
  };
  // fc of three features: keep x's scale near the features' (as a trained fc does).
  add("fc.weight", {d, layers * tc.hidden_size}, 0, o.init_std / std::sqrt(float(layers)));
  add("midlayer.self_attn.q_proj.weight", {qd, 2 * d}, 0, o.init_std);
  add("midlayer.self_attn.k_proj.weight", {kvd, 2 * d}, 0, o.init_std);
  add("midlayer.self_attn.v_proj.weight", {kvd, 2 * d}, 0, o.init_std);
  add("midlayer.self_attn.o_proj.weight", {d, qd}, 0, o.init_std);
  add("midlayer.mlp.gate_proj.weight", {I, d}, 0, o.init_std);
  add("midlayer.mlp.up_proj.weight", {I, d}, 0, o.init_std);
  add("midlayer.mlp.down_proj.weight", {d, I}, 0, o.init_std);
  add("midlayer.input_layernorm.weight", {d}, 1, 0.1f);
  add("midlayer.hidden_norm.weight", {d}, 1, 0.1f);
  add("midlayer.post_attention_layernorm.weight", {d}, 1, 0.1f);
  add("norm.weight", {d}, 1, 0.1f);
  add("lm_head.weight", {N, d}, 0, 0.5f);

  // A random draft vocabulary, ascending as the reference's scandata writes it.
  std::vector<int64_t> ids(static_cast<size_t>(V));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.resize(static_cast<size_t>(N));
  std::sort(ids.begin(), ids.end());
  HeadTensor d2t{"d2t", DType::I64, {N}, std::vector<unsigned char>(static_cast<size_t>(N) * 8)};
  for (int64_t i = 0; i < N; ++i) d2t.i64()[i] = ids[static_cast<size_t>(i)] - i;
  f.tensors.push_back(std::move(d2t));
  HeadTensor t2d{"t2d", DType::BOOL, {V}, std::vector<unsigned char>(static_cast<size_t>(V), 0)};
  for (int64_t id : ids) t2d.bytes[static_cast<size_t>(id)] = 1;
  f.tensors.push_back(std::move(t2d));
  return f;
}

void round_to_bf16(HeadFiles& files, bool store_bf16) {
  for (HeadTensor& t : files.tensors) {
    if (t.dtype != DType::F32) continue;
    const size_t n = t.bytes.size() / 4;
    std::vector<unsigned char> out(n * (store_bf16 ? 2 : 4));
    for (size_t i = 0; i < n; ++i) {
      const uint16_t b = f32_to_bf16(t.f32()[i]);
      if (store_bf16) {
        std::memcpy(&out[i * 2], &b, 2);
      } else {
        const float f = bf16_to_f32(b);
        std::memcpy(&out[i * 4], &f, 4);
      }
    }
    t.bytes = std::move(out);
    if (store_bf16) t.dtype = DType::BF16;
  }
}

std::string write_head_folder(const std::string& name, const HeadFiles& files) {
  const std::string dir = temp_dir("eagle3-head-" + name);
  std::ofstream(dir + "/config.json") << files.config.dump(2);
  std::vector<TensorToWrite> tensors;
  for (const HeadTensor& t : files.tensors)
    tensors.push_back({t.name, t.dtype, t.shape, t.bytes.data()});
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

std::unique_ptr<EagleHead> load_random_eagle3_head(const std::string& name,
                                                   const LlamaModel& target, Eagle3HeadOptions o) {
  const auto L = static_cast<int32_t>(target.config().num_layers);
  if (o.aux_layers.empty() && L < 7)
    o.aux_layers = L > 1 ? std::vector<int32_t>{L - 1, 0} : std::vector<int32_t>{0};
  return EagleHead::load(write_head_folder(name, random_eagle3_head(target, o)), target);
}

}  // namespace eagle2::test
