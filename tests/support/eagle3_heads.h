// Random EAGLE-3 heads for tests, in the reference's layout (config.json + model.safetensors:
// fc, midlayer.*, norm, lm_head, d2t, t2d), built in memory so a test can corrupt one thing
// before writing the folder.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "draft/eagle_head.h"
#include "model/llama_model.h"

namespace eagle2::test {

struct HeadTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  float* f32() { return reinterpret_cast<float*>(bytes.data()); }
  int64_t* i64() { return reinterpret_cast<int64_t*>(bytes.data()); }
};

struct HeadFiles {
  nlohmann::json config;
  std::vector<HeadTensor> tensors;

  HeadTensor* find(const std::string& name);  // nullptr when absent
  void remove(const std::string& name);
};

struct Eagle3HeadOptions {
  int64_t draft_vocab = 0;               // 0: half the target's vocabulary
  std::vector<int32_t> aux_layers = {};  // empty: none in config.json (the default {2, L/2, L-3})
  int64_t intermediate = 0;              // 0: the target's
  int64_t num_heads = 0, num_kv_heads = 0;  // 0: the target's
  float init_std = 0.15f;
  uint64_t seed = 5;
};

// A random head for `target`: the draft vocabulary is a random set of target ids (ascending,
// d2t[i] = id - i) and t2d marks them.
HeadFiles random_eagle3_head(const LlamaModel& target, const Eagle3HeadOptions& o = {});

// Rounds every F32 tensor to bf16 values: stored as BF16 (store_bf16) or as F32 holding those
// values (the float32 upcast a reference runs).
void round_to_bf16(HeadFiles& files, bool store_bf16);

// Writes config.json + model.safetensors to a fresh temp folder named after `name`.
std::string write_head_folder(const std::string& name, const HeadFiles& files);

// A random EAGLE-3 head written and loaded for `target` (of any depth): when o.aux_layers is empty
// and the target is too shallow for the default {2, L/2, L-3}, the feature layers are the last
// layer and layer 0, in that (descending) order, so that the drafters' concatenation order is
// exercised too. For the equality and batch tests.
std::unique_ptr<EagleHead> load_random_eagle3_head(const std::string& name,
                                                   const LlamaModel& target,
                                                   Eagle3HeadOptions o = {});

}  // namespace eagle2::test
