// The residual block of Medusa and Hydra heads (draft/medusa_heads.h), forward and backward:
//   z = inp W^T + b                 inp [M, K], W [d, K], b [d], z [M, d] (saved for the backward)
//   out = inp[:, :d] + SiLU(z)      out [M, d]
// Medusa's block has K = d (the residual is the whole input); Hydra's first block reads
// [f_t, E(x_{t+1}), ..] (K = (k + 1) d) and keeps f_t, the input's first d columns, as its
// residual. The forward's SiLU and residual add are the inference heads' own (res_block_output).
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "core/thread_pool.h"

namespace eagle2::train {

// out [M, d], z [M, d]; inp [M, K] with K = W.cols >= d = W.rows.
void res_block_forward(float* out, float* z, const float* inp, int64_t M, const Matrix& W,
                       const float* b, ThreadPool& pool);

// Given dout = dL/dout [M, d]: dinp [M, K] += dout on the residual columns + dz W (null: not
// wanted, e.g. the first block, whose input is data), dW [d, K] += dz^T inp, db [d] += sum over
// rows of dz, where dz = dout * SiLU'(z) is written to dz_scratch [M, d].
void res_block_backward(float* dinp, float* dW, float* db, float* dz_scratch, const float* dout,
                        const float* inp, const float* z, int64_t M, const Matrix& W,
                        ThreadPool& pool);

}  // namespace eagle2::train
