// eagle2/model.h over model/llama_model.h, model/llama_config.h and model/random_model.h.
#include "eagle2/model.h"

#include <filesystem>

#include "api/convert.h"
#include "api/handles.h"
#include "io/gguf.h"
#include "model/random_model.h"

namespace eagle2::api {

const char* rope_scaling_name(RopeScaling s) {
  switch (s) {
    case RopeScaling::None:
      return "none";
    case RopeScaling::Linear:
      return "linear";
    case RopeScaling::Llama3:
      return "llama3";
  }
  return "?";
}

const char* dtype_name(DType t) {
  return eagle2::dtype_name(to_internal(t));
}

ModelConfig parse_model_config(const std::string& json_text, const std::string& where) {
  return to_public(LlamaConfig::parse(json_text, where));
}

ModelConfig load_model_config(const std::string& path) {
  return to_public(LlamaConfig::load(path));
}

ModelConfig model_config_of(const std::string& model) {
  if (model.ends_with(".gguf") && !std::filesystem::is_directory(model))
    return to_public(LlamaConfig::from_gguf(GgufFile(model)));
  return to_public(LlamaConfig::load(model + "/config.json"));
}

std::string model_config_json(const ModelConfig& config) {
  return to_internal(config).to_json();
}

Model Model::load(const std::string& dir) {
  auto impl = std::make_unique<Impl>();
  impl->model = LlamaModel::load(dir);
  impl->config = to_public(impl->model->config());
  return Model(std::move(impl));
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const ModelConfig& Model::config() const {
  return impl_->config;
}
const std::string& Model::dir() const {
  return impl_->model->dir();
}
int64_t Model::parameter_count() const {
  return impl_->model->parameter_count();
}
size_t Model::weight_bytes() const {
  return impl_->model->weight_bytes();
}
size_t Model::embedding_bytes() const {
  return impl_->model->embedding().nbytes();
}
std::vector<std::string> Model::weight_dtypes() const {
  return impl_->model->weight_dtypes();
}

void write_random_model(const std::string& dir, const ModelConfig& config, DType dtype,
                        uint64_t seed) {
  eagle2::write_random_model(dir, to_internal(config), to_internal(dtype), seed);
}

}  // namespace eagle2::api
