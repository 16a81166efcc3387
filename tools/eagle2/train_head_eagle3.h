// eagle2 train-head --arch eagle3 (cmd_train_head_eagle3.cpp) on the data cmd_train_head.cpp
// built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/train_head.h"

namespace eagle2::cli {

struct Eagle3Run {
  std::string out_dir;
  bool bf16 = false;
  api::HeadTrainOptions train;
  api::Eagle3Init init;
  int64_t eval_seq_len = 0;  // held-out windows
  // Held-out prompts for tau with the saved head (none: not measured).
  std::vector<std::vector<int32_t>> tau_prompts;
  int64_t tau_tokens = 96;
};

// Trains, saves, and reports per-step losses and agreement, held-out agreement, tau with the saved
// head, and CPU time.
int train_eagle3_head(const Eagle3Run& run, api::Model& target, const api::HeadData& data,
                      const api::HeadData& held, api::Threads& threads);

}  // namespace eagle2::cli
