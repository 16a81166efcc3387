// Reader of PyTorch `torch.save` checkpoints (pytorch_model.bin): a zip archive of stored entries
//   <archive>/data.pkl      the pickled state dict, {name: tensor}
//   <archive>/data/<key>    one raw little-endian storage per key
//   <archive>/byteorder     optional, "little"
//   <archive>/version
// The pickle is run on a tiny, allowlisted stack machine (no Python, no arbitrary globals), so a
// hostile file can at worst produce an Error. Tensors whose strides are contiguous point into the
// mapped file; others (and misaligned ones) are copied into buffers owned by the checkpoint.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/aligned_copies.h"
#include "core/mapped_file.h"
#include "core/tensor.h"

namespace eagle2 {

class TorchCheckpoint {
 public:
  // Maps and parses the whole file; every structural problem is an Error of one line naming the
  // file (and the zip entry or tensor).
  explicit TorchCheckpoint(const std::string& path);

  const std::string& path() const { return path_; }
  // State-dict key -> view. Views stay valid as long as this object (moves keep them valid).
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }

 private:
  std::string path_;
  std::unique_ptr<MappedFile> file_;
  AlignedCopies copies_;  // the misaligned or strided tensors, copied aligned and contiguous
  std::map<std::string, TensorView> tensors_;
};

}  // namespace eagle2
