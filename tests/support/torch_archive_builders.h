// Builders for crafted torch.save checkpoints: a tiny stored-zip writer and hand-assembled pickles
// (protocol 2, the opcodes torch.save emits), plus the file and error helpers and the fixture that
// the checkpoint reader's tests (tests/unit/test_torch_checkpoint*.cpp) share.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "support/shared_data.h"

namespace eagle2::test::torch_archive {

// ---------------------------------------------------------------------------------------------
// Byte helpers

// v as n little-endian bytes.
std::string le(uint64_t v, int n);
std::string f32_bytes(const std::vector<float>& v);
std::string u16_bytes(const std::vector<uint16_t>& v);
std::vector<float> f32_of(const TensorView& t);

// Rewrites in place, then sets the length: cheaper than O_TRUNC in the fuzz loops.
void write_bytes(const std::string& path, const std::string& bytes);

// The Error's message of loading the checkpoint at path; a test failure if nothing, or something
// other than Error, is thrown.
std::string load_error_of(const std::string& path);

// ---------------------------------------------------------------------------------------------
// A minimal zip writer: stored entries only, like torch.save, optionally in zip64 form.

struct ZipItem {
  std::string name;
  std::string data;
  uint16_t method = 0;
  uint16_t flags = 0;
};

struct ZipOptions {
  bool zip64 = false;  // saturate the 32-bit fields and put the real values in zip64 records
  size_t align = 64;   // pad the local extra field so data starts at a multiple (1: no padding)
  size_t phase = 0;    // ... plus this many bytes, to misalign on purpose
};

std::string make_zip(const std::vector<ZipItem>& items, const ZipOptions& opt = {});

// Reads back the entries of a plain (non-zip64) archive such as the real test file; trusted input.
std::vector<ZipItem> read_zip_items(const std::string& zip);

// ---------------------------------------------------------------------------------------------
// Hand-assembled pickles (protocol 2, the opcodes torch.save emits)

struct Pickle {
  std::string b = "\x80\x02";

  Pickle& raw(const std::string& s) {
    b += s;
    return *this;
  }
  Pickle& op(unsigned char c) {
    b += static_cast<char>(c);
    return *this;
  }
  Pickle& str(const std::string& s) { return op('X').raw(le(s.size(), 4) + s); }
  Pickle& integer(int64_t v) {
    if (v >= 0 && v < 256) return op('K').raw(le(static_cast<uint64_t>(v), 1));
    if (v >= 0 && v < 65536) return op('M').raw(le(static_cast<uint64_t>(v), 2));
    return op(0x8a).raw(le(8, 1) + le(static_cast<uint64_t>(v), 8));  // LONG1, 8 bytes
  }
  Pickle& global(const std::string& module, const std::string& name) {
    return op('c').raw(module + "\n" + name + "\n");
  }
  Pickle& ints(const std::vector<int64_t>& v) {
    op('(');
    for (int64_t x : v) integer(x);
    return op('t');
  }
  Pickle& stop() { return op('.'); }
};

struct Spec {
  std::string key;
  std::string storage_type = "FloatStorage";
  std::string storage_key = "0";
  int64_t numel = 6;
  int64_t offset = 0;
  std::vector<int64_t> shape{2, 3};
  std::vector<int64_t> stride{3, 1};
  bool as_parameter = false;  // wrap in torch._utils._rebuild_parameter
};

// Pushes one rebuilt tensor, as torch.save writes it.
void push_tensor(Pickle& p, const Spec& s);

std::string state_dict_pickle(const std::vector<Spec>& specs);

// An archive holding `pkl` as data.pkl plus the given storages.
std::string checkpoint(const std::string& pkl,
                       const std::vector<std::pair<std::string, std::string>>& storages,
                       const ZipOptions& opt = {});

inline const std::vector<float> kSix{0, 1, 2, 3, 4, 5};

class TorchCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = test::temp_dir("torch_checkpoint") + "/model.bin"; }
  // Writes the archive and returns the Error message of loading it.
  std::string error_for(const std::string& bytes) {
    write_bytes(path_, bytes);
    return load_error_of(path_);
  }
  std::string path_;
};

}  // namespace eagle2::test::torch_archive
