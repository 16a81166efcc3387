#include "model/upcast_weights.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace eagle2 {

namespace {

// Weight types that have a float32 value per element. Anything else (F32 itself, and any integer
// tensor a checkpoint may carry) is left as it is.
bool upcast(DType t) {
  return t == DType::F16 || t == DType::BF16 || is_block_dtype(t);
}

}  // namespace

TensorStore upcast_to_f32(TensorStore store) {
  auto original = std::make_shared<const TensorStore>(std::move(store));
  std::vector<std::shared_ptr<const void>> owners = {original};
  std::map<std::string, TensorView> tensors;
  for (const auto& [name, t] : original->tensors()) {
    TensorView v = t;
    if (upcast(t.dtype)) {
      auto values = std::make_shared<std::vector<float>>(static_cast<size_t>(t.numel()));
      convert_to_f32(t.dtype, t.data, values->data(), values->size());
      v.dtype = DType::F32;
      v.data = values->data();
      owners.push_back(std::move(values));
    }
    tensors.emplace(name, std::move(v));
  }
  return TensorStore::from_views(original->where(), std::move(tensors), std::move(owners));
}

}  // namespace eagle2
