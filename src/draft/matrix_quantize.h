// Draft weights quantized like the target (EagleHead::quantize_weights, MedusaHeads): drafting is
// a chain of few-row forwards, each reading every draft weight, so on a quantized target a bf16
// drafter costs as much per weight as the target itself.
#pragma once

#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace eagle2 {

// W re-pointed at a copy quantized to `type` (Q8_0 or Q4_0, ggml's reference rounding) appended to
// `storage` (which must outlive W), in the layout the active kernels read fastest. A matrix that is
// already quantized, or whose rows are not whole blocks, stays as it is (false). Error for any
// other type.
bool quantize_matrix(Matrix& W, DType type, std::vector<std::vector<unsigned char>>& storage);

}  // namespace eagle2
