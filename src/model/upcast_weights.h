// Float32 copies of a checkpoint's weights (LoadOptions::upcast_f32): for runs that must match a
// reference computed with float32 activations over upcast weights (the goldens), which a matmul
// over BF16 weights does not reproduce (it rounds its activations to bf16, kernels/matmul.h).
#pragma once

#include "io/safetensors.h"

namespace eagle2 {

// `store` with every F16, BF16 or quantized tensor converted to F32 (F16/BF16 exactly, quantized
// types dequantized as ggml does) in memory the returned store owns; other tensors are used where
// they are (the returned store keeps `store`'s files alive). Names, shapes and files unchanged.
TensorStore upcast_to_f32(TensorStore store);

}  // namespace eagle2
