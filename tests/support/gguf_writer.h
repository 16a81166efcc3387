// Writes small GGUF files for tests: metadata of every type and tensor infos, laid out as ggml
// writes them (aligned data, offsets in order), so that tests can build valid files and then
// break them one field at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace eagle2::test {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  // Raw building blocks, appended to the metadata section in call order.
  void key(const std::string& k, uint32_t type);  // key and value type; the value follows
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void f32(float v) { raw(&v, 4); }
  void str(const std::string& s);  // length + bytes

  // Whole key/values.
  void kv_u32(const std::string& k, uint32_t v);
  void kv_bool(const std::string& k, bool v);
  void kv_string(const std::string& k, const std::string& v);
  void kv_strings(const std::string& k, const std::vector<std::string>& v);
  void kv_f32s(const std::string& k, const std::vector<float>& v);
  void kv_i32s(const std::string& k, const std::vector<int32_t>& v);

  // A tensor info with ggml type `type`; its data (zeros) is placed after the previous one.
  void tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
              uint64_t bytes);

  // The file's bytes: header, metadata, tensor infos, padding, data.
  std::string bytes(uint64_t alignment = 32) const;

 private:
  void raw(const void* p, size_t n);
  uint32_t version_;
  uint64_t n_kv_ = 0;
  std::string kv_;
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    uint64_t bytes;
  };
  std::vector<Tensor> tensors_;
};

// A vocabulary-only GGUF of a tiny SentencePiece ("llama") tokenizer: <unk> <s> </s> <0x41> ▁ a b
// ▁a ab, with scores that make "ab" merge before "▁a".
std::string tiny_spm_gguf();

}  // namespace eagle2::test
