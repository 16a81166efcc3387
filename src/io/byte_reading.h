// Byte-level helpers shared by the parts of the torch.save checkpoint reader (the zip reader, the
// pickle machine, the tensor materialization in torch_checkpoint.cpp). Private to src/io/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace eagle2::detail {

inline uint64_t rd_le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint32_t rd16(const unsigned char* p) {
  return static_cast<uint32_t>(rd_le(p, 2));
}
inline uint32_t rd32(const unsigned char* p) {
  return static_cast<uint32_t>(rd_le(p, 4));
}
inline uint64_t rd64(const unsigned char* p) {
  return rd_le(p, 8);
}

// Names come from the file and may hold anything; an Error must stay one readable line.
inline std::string printable(std::string_view s) {
  constexpr size_t kMax = 200;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  return out;
}

}  // namespace eagle2::detail
