// Scratch buffers of the training layers, sized per call.
#pragma once

#include <cstdint>
#include <vector>

namespace eagle2::train {

// n floats, all zero (accumulators).
inline void zeroed(std::vector<float>& buf, int64_t n) {
  buf.assign(static_cast<size_t>(n), 0.0f);
}

// n floats, contents left as they were (every element is written before it is read).
inline void sized(std::vector<float>& buf, int64_t n) {
  buf.resize(static_cast<size_t>(n));
}

}  // namespace eagle2::train
