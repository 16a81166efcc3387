#include "draft/eagle3_config.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace eagle2 {

using nlohmann::json;

namespace {

constexpr const char* kEagle3Architecture = "LlamaForCausalLMEagle3";
constexpr const char* kAuxKey = "eagle_aux_hidden_state_layer_ids";

// A present, non-null field as an int64; Error naming it otherwise.
int64_t integer_field(const json& v, const char* key, const std::string& where) {
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
    fail(where, ": \"", key, "\" must be an integer, got ", v.dump());
  return v.get<int64_t>();
}

const json* find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

HeadConfig parse_head_config(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception&) {
    // LlamaConfig's parser words JSON errors the way every other config error is worded.
    LlamaConfig::parse(text, where);
    fail(where, ": not valid JSON");
  }
  if (!j.is_object()) fail(where, ": not a JSON object");
  HeadConfig c;
  try {
    // The EAGLE-3 architecture is a LLaMA decoder layer as far as the config goes: parse it as
    // one, with the head-specific fields read here.
    if (const json* a = find(j, "architectures");
        a && a->is_array() && !a->empty() && (*a)[0] == kEagle3Architecture) {
      c.says_eagle3 = true;
      j["architectures"][0] = "LlamaForCausalLM";
    }
    c.llama = LlamaConfig::parse(j.dump(), where);
    if (const json* b = find(j, "bias")) {
      if (!b->is_boolean()) fail(where, ": \"bias\" must be true or false");
      c.fc_bias = b->get<bool>();
    }
    if (const json* v = find(j, "draft_vocab_size")) {
      c.says_eagle3 = true;
      c.draft_vocab_size = integer_field(*v, "draft_vocab_size", where);
      if (*c.draft_vocab_size < 1 || *c.draft_vocab_size > c.llama.vocab_size)
        fail(where, ": \"draft_vocab_size\" (", *c.draft_vocab_size, ") must be in [1, vocab_size ",
             c.llama.vocab_size, "]");
    }
    if (const json* v = find(j, "target_hidden_size")) {
      c.says_eagle3 = true;
      c.target_hidden_size = integer_field(*v, "target_hidden_size", where);
      if (*c.target_hidden_size < 1 || *c.target_hidden_size > config_limits::kMaxWidth)
        fail(where, ": \"target_hidden_size\" (", *c.target_hidden_size, ") must be in [1, ",
             config_limits::kMaxWidth, "]");
    }
    const json* aux = find(j, kAuxKey);
    if (const json* nested = find(j, "eagle_config"); !aux && nested && nested->is_object())
      aux = find(*nested, kAuxKey);
    if (aux) {
      c.says_eagle3 = true;
      if (!aux->is_array() || aux->empty())
        fail(where, ": \"", kAuxKey, "\" must be a non-empty list of layer indices");
      std::vector<int64_t> ids;
      for (const json& id : *aux) ids.push_back(integer_field(id, kAuxKey, where));
      c.aux_layer_ids = std::move(ids);
    }
    if (const json* v = find(j, "norm_before_residual"); v && *v != false)
      fail(where, ": \"norm_before_residual\": ", v->dump(),
           " (an EAGLE-3 variant whose residual is the normed hidden state) is not supported");
  } catch (const json::exception& e) {
    fail(where, ": malformed config (", e.what(), ")");
  }
  return c;
}

std::vector<int32_t> eagle3_feature_layers(const HeadConfig& c, int64_t target_layers,
                                           const std::string& where) {
  const int64_t L = target_layers;
  if (!c.aux_layer_ids) {
    // The reference's choice (and vLLM's): low, middle and high.
    if (L < 7)
      fail(where, ": no \"", kAuxKey,
           "\": the default layers {2, L/2, L-3} need a target of at "
           "least 7 layers to be distinct (the target has ",
           L, ")");
    return {2, static_cast<int32_t>(L / 2), static_cast<int32_t>(L - 3)};
  }
  std::vector<int32_t> ids;
  for (int64_t id : *c.aux_layer_ids) {
    if (id < 0 || id >= L)
      fail(where, ": \"", kAuxKey, "\" names layer ", id, ", but the target has ", L,
           " layers (0 to ", L - 1, ")");
    if (std::find(ids.begin(), ids.end(), id) != ids.end())
      fail(where, ": \"", kAuxKey, "\" names layer ", id, " twice");
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

}  // namespace eagle2
