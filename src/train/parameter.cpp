#include "train/parameter.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace eagle2::train {

Parameter::Parameter(std::string n, std::vector<int64_t> s, bool d)
    : name(std::move(n)), shape(std::move(s)), decay(d) {
  int64_t count = 1;
  for (int64_t e : shape) {
    if (e < 0) fail("parameter '", name, "': negative shape ", shape_string(shape));
    count *= e;
  }
  value.assign(static_cast<size_t>(count), 0.0f);
  grad.assign(static_cast<size_t>(count), 0.0f);
}

Matrix Parameter::matrix() const {
  if (shape.size() != 2)
    fail("parameter '", name, "' has shape ", shape_string(shape), ", expected 2-D");
  return Matrix{DType::F32, shape[0], shape[1], value.data()};
}

void zero_grads(ParamList params) {
  for (Parameter* p : params) std::fill(p->grad.begin(), p->grad.end(), 0.0f);
}

int64_t total_numel(ParamList params) {
  int64_t n = 0;
  for (const Parameter* p : params) n += p->numel();
  return n;
}

std::vector<TensorToWrite> export_tensors(ParamList params, DType dtype,
                                          std::vector<std::vector<uint16_t>>& storage) {
  if (dtype != DType::F32 && dtype != DType::BF16)
    fail("export: dtype ", dtype_name(dtype), " is not supported (F32 or BF16)");
  std::vector<TensorToWrite> tensors;
  storage.reserve(storage.size() + params.size());
  for (const Parameter* p : params) {
    const void* data = p->value.data();
    if (dtype == DType::BF16) {
      std::vector<uint16_t>& out = storage.emplace_back(p->value.size());
      for (size_t i = 0; i < out.size(); ++i) out[i] = f32_to_bf16(p->value[i]);
      data = out.data();
    }
    tensors.push_back({p->name, dtype, p->shape, data});
  }
  return tensors;
}

}  // namespace eagle2::train
