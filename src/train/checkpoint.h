// Training checkpoints: one safetensors file holding everything a run needs to continue exactly
// as if it had never stopped: parameter values, AdamW moments and step count, the training step
// and the random stream's state. All tensors are raw float32, so values round-trip bit-exactly.
//
// Layout: tensor "<name>" = value, "adamw.m.<name>" / "adamw.v.<name>" = moments; "__metadata__":
//   format = "eagle2-train-checkpoint", version = "1", step, adamw_step, rng_state (decimal), the
//   AdamW hyper-parameters (informational), and caller entries prefixed "extra.".
// Gradients are not saved: a step starts by zeroing them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "train/optimizer.h"
#include "train/parameter.h"

namespace eagle2::train {

struct TrainState {
  int64_t step = 0;                          // optimizer steps done (the next step's 0-based index)
  uint64_t rng_state = 0;                    // TrainRng::state()
  std::map<std::string, std::string> extra;  // caller's own entries (data position, config, ...)
};

// Writes atomically (temporary file then rename), so a crash never leaves a torn checkpoint.
void save_checkpoint(const std::string& path, const AdamW& opt, const TrainState& state);

// Restores the values and moments of opt.params() and opt's step count, and returns the state.
// Every parameter must be present with its exact shape and F32 dtype; anything else (including
// tensors the list does not know) is an Error naming the file and tensor.
TrainState load_checkpoint(const std::string& path, AdamW& opt);

}  // namespace eagle2::train
