// Checks on a checkpoint's tensors shared by the loaders of target models (llama_model.cpp) and
// EAGLE draft heads (eagle_head.cpp), so that both refuse the same things with the same words.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace eagle2 {

// True for tensors a checkpoint may carry that hold nothing the engine needs.
bool is_ignorable_checkpoint_tensor(const std::string& name);

// The first tensor (in name order) that is neither in `used` nor ignorable; nullptr when none.
// A loader calls it after binding every weight it needs: a leftover tensor means the checkpoint
// and config.json disagree (say, about the number of layers), which would otherwise go unnoticed.
const TensorView* first_unused_tensor(const std::map<std::string, TensorView>& tensors,
                                      const std::set<std::string>& used);

// The matrices of one fused matmul (q/k/v, gate/up) must share a dtype, because matmul_multi
// runs them in one dispatch: an Error "<file>: tensor 'b' has dtype F16, but 'a' has BF16 ..."
// naming the first that differs from the first tensor.
void require_one_dtype(const std::vector<const TensorView*>& group);

}  // namespace eagle2
