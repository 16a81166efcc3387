// The random stream of a training run (input noise, data shuffling, weight initialisation): the
// project's SplitMix64 (core/splitmix64.h), whose one-word state checkpoints store, so a resumed
// run draws exactly the numbers an uninterrupted run would have drawn.
#pragma once

#include "core/splitmix64.h"

namespace eagle2::train {

using TrainRng = SplitMix64;

}  // namespace eagle2::train
