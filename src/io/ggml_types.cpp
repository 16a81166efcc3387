// ggml's tensor types as GGUF files name them: block size in elements and bytes per block, from
// ggml's block layouts (ggml-common.h). Only what the GGUF reader needs to place tensor data; the
// formats themselves are decoded with the GGUF weights.
#include <cstdint>

#include "io/gguf.h"

namespace eagle2 {

namespace {

struct TypeInfo {
  const char* name;  // nullptr: an id ggml never used or has retired
  uint64_t block;
  uint64_t bytes;
};

// Indexed by the ggml type id. Ids 4, 5 (Q4_2, Q4_3) and 31-33, 36-38 (the retired repacked
// Q4_0_x_x and IQ4_NL_x_x layouts) are not valid in files.
// clang-format off
constexpr TypeInfo kTypes[] = {
    {"F32", 1, 4},          {"F16", 1, 2},         {"Q4_0", 32, 18},     {"Q4_1", 32, 20},
    {nullptr, 0, 0},        {nullptr, 0, 0},       {"Q5_0", 32, 22},     {"Q5_1", 32, 24},
    {"Q8_0", 32, 34},       {"Q8_1", 32, 36},      {"Q2_K", 256, 84},    {"Q3_K", 256, 110},
    {"Q4_K", 256, 144},     {"Q5_K", 256, 176},    {"Q6_K", 256, 210},   {"Q8_K", 256, 292},
    {"IQ2_XXS", 256, 66},   {"IQ2_XS", 256, 74},   {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
    {"IQ4_NL", 32, 18},     {"IQ3_S", 256, 110},   {"IQ2_S", 256, 82},   {"IQ4_XS", 256, 136},
    {"I8", 1, 1},           {"I16", 1, 2},         {"I32", 1, 4},        {"I64", 1, 8},
    {"F64", 1, 8},          {"IQ1_M", 256, 56},    {"BF16", 1, 2},       {nullptr, 0, 0},
    {nullptr, 0, 0},        {nullptr, 0, 0},       {"TQ1_0", 256, 54},   {"TQ2_0", 256, 66},
    {nullptr, 0, 0},        {nullptr, 0, 0},       {nullptr, 0, 0},      {"MXFP4", 32, 17},
};
// clang-format on
constexpr uint32_t kCount = sizeof(kTypes) / sizeof(kTypes[0]);

}  // namespace

bool ggml_type_size(uint32_t type, uint64_t* block_elements, uint64_t* block_bytes) {
  if (type >= kCount || kTypes[type].name == nullptr) return false;
  *block_elements = kTypes[type].block;
  *block_bytes = kTypes[type].bytes;
  return true;
}

const char* ggml_type_name(uint32_t type) {
  return type < kCount && kTypes[type].name != nullptr ? kTypes[type].name : "unknown";
}

}  // namespace eagle2
