// Eagle3Trainer::save: the layout EagleHead loads (draft/eagle3_config.h, eagle3_head.cpp), as
// published EAGLE-3 heads are laid out.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/safetensors.h"
#include "train/eagle3_trainer.h"

namespace eagle2::train {

void Eagle3Trainer::save(const std::string& dir, DType dtype) const {
  if (dtype != DType::F32 && dtype != DType::BF16)
    fail("head export: dtype ", dtype_name(dtype), " is not supported (F32 or BF16)");
  std::filesystem::create_directories(dir);
  LlamaConfig c = target_.config();
  c.num_layers = 1;
  c.tie_word_embeddings = false;
  c.intermediate_size = cfg_.intermediate;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(c.to_json());
  j["architectures"] = {"LlamaForCausalLMEagle3"};
  j["draft_vocab_size"] = cfg_.draft_vocab;
  // The reference's default layers, written out so the folder does not depend on the default.
  j["eagle_aux_hidden_state_layer_ids"] = layers_;
  {
    const std::string path = dir + "/config.json";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, ": cannot write");
    out << j.dump(2) << "\n";
    if (!out) fail(path, ": write failed");
  }
  const int64_t V = target_.config().vocab_size, Vd = cfg_.draft_vocab;
  std::vector<int64_t> d2t(static_cast<size_t>(Vd));
  std::vector<uint8_t> t2d(static_cast<size_t>(V), 0);
  for (int64_t i = 0; i < Vd; ++i) {
    d2t[static_cast<size_t>(i)] = draft_ids_[static_cast<size_t>(i)] - i;
    t2d[static_cast<size_t>(draft_ids_[static_cast<size_t>(i)])] = 1;
  }
  // fc trained on scaled features (Eagle3Init::feature_scale): fold the scale into its columns so
  // the saved head reads the raw features.
  Parameter fc = w_->fc;
  const int64_t C = cfg_.hidden, F = cfg_.feature_width;
  for (int64_t r = 0; r < C; ++r)
    for (int64_t i = 0; i < F; ++i)
      fc.value[static_cast<size_t>(r * F + i)] *= feature_scale_[static_cast<size_t>(i / C)];
  std::vector<Parameter*> saved(params_.begin(), params_.end());
  std::replace(saved.begin(), saved.end(), &w_->fc, &fc);
  std::vector<std::vector<uint16_t>> narrowed;
  std::vector<TensorToWrite> tensors = export_tensors(saved, dtype, narrowed);
  tensors.push_back({"d2t", DType::I64, {Vd}, d2t.data()});
  tensors.push_back({"t2d", DType::BOOL, {V}, t2d.data()});
  write_safetensors(dir + "/model.safetensors", tensors, {{"format", "pt"}});
}

}  // namespace eagle2::train
