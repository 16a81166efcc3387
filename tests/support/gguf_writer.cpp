#include "support/gguf_writer.h"

#include <cstring>

namespace eagle2::test {

void GgufWriter::raw(const void* p, size_t n) {
  kv_.append(static_cast<const char*>(p), n);
}

void GgufWriter::str(const std::string& s) {
  u64(s.size());
  kv_ += s;
}

void GgufWriter::key(const std::string& k, uint32_t type) {
  ++n_kv_;
  str(k);
  u32(type);
}

void GgufWriter::kv_u32(const std::string& k, uint32_t v) {
  key(k, 4);
  u32(v);
}

void GgufWriter::kv_bool(const std::string& k, bool v) {
  key(k, 7);
  u8(v ? 1 : 0);
}

void GgufWriter::kv_string(const std::string& k, const std::string& v) {
  key(k, 8);
  str(v);
}

void GgufWriter::kv_strings(const std::string& k, const std::vector<std::string>& v) {
  key(k, 9);
  u32(8);
  u64(v.size());
  for (const auto& s : v) str(s);
}

void GgufWriter::kv_f32s(const std::string& k, const std::vector<float>& v) {
  key(k, 9);
  u32(6);
  u64(v.size());
  for (float f : v) f32(f);
}

void GgufWriter::kv_i32s(const std::string& k, const std::vector<int32_t>& v) {
  key(k, 9);
  u32(5);
  u64(v.size());
  for (int32_t i : v) raw(&i, 4);
}

void GgufWriter::tensor(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
                        uint64_t bytes) {
  tensors_.push_back({name, dims, type, bytes});
}

std::string GgufWriter::bytes(uint64_t alignment) const {
  std::string out = "GGUF";
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  put(&version_, 4);
  const uint64_t n_tensors = tensors_.size();
  put(&n_tensors, 8);
  put(&n_kv_, 8);
  out += kv_;
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    const uint64_t len = t.name.size();
    put(&len, 8);
    out += t.name;
    const auto n_dims = static_cast<uint32_t>(t.dims.size());
    put(&n_dims, 4);
    for (uint64_t d : t.dims) put(&d, 8);
    put(&t.type, 4);
    put(&offset, 8);
    offset += (t.bytes + alignment - 1) / alignment * alignment;
  }
  if (!tensors_.empty()) {
    out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
    out.resize(out.size() + offset, '\0');
  }
  return out;
}

std::string tiny_spm_gguf() {
  GgufWriter w;
  w.kv_string("general.architecture", "llama");
  w.kv_string("tokenizer.ggml.model", "llama");
  w.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "<0x41>", "\xE2\x96\x81", "a", "b",
                                         "\xE2\x96\x81"
                                         "a",
                                         "ab"});
  w.kv_f32s("tokenizer.ggml.scores", {0, 0, 0, 0, -1, -2, -3, -0.5f, -0.25f});
  w.kv_i32s("tokenizer.ggml.token_type", {2, 3, 3, 6, 1, 1, 1, 1, 1});
  w.kv_u32("tokenizer.ggml.bos_token_id", 1);
  w.kv_u32("tokenizer.ggml.eos_token_id", 2);
  return w.bytes();
}

}  // namespace eagle2::test
