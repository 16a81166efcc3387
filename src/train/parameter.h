// A trainable tensor: float32 values and their gradient, with a name (the checkpoint key) and a
// shape. Models hold Parameters; optimizers and checkpoints take a list of pointers to them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "io/safetensors.h"

namespace eagle2::train {

struct Parameter {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> value;
  std::vector<float> grad;
  // AdamW's decoupled weight decay applies only where this is set (conventionally matrices, not
  // norm weights or biases).
  bool decay = true;

  Parameter() = default;
  Parameter(std::string name, std::vector<int64_t> shape, bool decay = true);

  int64_t numel() const { return static_cast<int64_t>(value.size()); }
  // The value as an nn.Linear weight [shape[0], shape[1]] for the matmul kernels (2-D only).
  Matrix matrix() const;
};

using ParamList = std::span<Parameter* const>;

void zero_grads(ParamList params);
int64_t total_numel(ParamList params);

// The parameters as tensors to export in `dtype`: F32 points at the values, BF16 narrows them into
// `storage` (which must outlive the returned views). Error for other dtypes.
std::vector<TensorToWrite> export_tensors(ParamList params, DType dtype,
                                          std::vector<std::vector<uint16_t>>& storage);

}  // namespace eagle2::train
