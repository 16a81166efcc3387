// The config.json of an EAGLE draft head. Both kinds are LLaMA configs of one decoder layer; an
// EAGLE-3 head (SafeAILab/EAGLE's EAGLE-3 `Model`, and the heads vLLM, SGLang and llama.cpp load)
// may say "architectures": ["LlamaForCausalLMEagle3"] and adds:
//   draft_vocab_size                   rows of its own lm_head (default vocab_size)
//   target_hidden_size                 width of the target's features (default: the head's)
//   eagle_aux_hidden_state_layer_ids   the target layers whose inputs are its features (default
//                                      {2, L/2, L-3} of the target's L layers, as the reference)
// (the last also under "eagle_config", where some exporters put it). An EAGLE-1/2 head may carry
// "bias" (its fc's bias, default true).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/llama_config.h"

namespace eagle2 {

struct HeadConfig {
  LlamaConfig llama;
  bool fc_bias = true;  // EAGLE-1/2 "bias"
  // Whether config.json itself marks an EAGLE-3 head (the architecture or one of its fields); the
  // weights decide too (EagleHead::load: a d2t tensor, or fc over three target widths).
  bool says_eagle3 = false;
  std::optional<int64_t> draft_vocab_size;
  std::optional<int64_t> target_hidden_size;
  std::optional<std::vector<int64_t>> aux_layer_ids;
};

// Parses config.json text (`where` names it in errors). The EAGLE-3 fields are checked for type
// and range here (draft_vocab_size in [1, vocab_size], target_hidden_size positive, the layer ids
// a non-empty list of integers); "norm_before_residual": true (a variant whose residual is the
// normed hidden state) is refused rather than drafted wrongly.
HeadConfig parse_head_config(const std::string& text, const std::string& where);

// The target layers whose inputs an EAGLE-3 head reads, in concatenation order: the config's ids,
// each in [0, target_layers) and all distinct, or the reference's default {2, L/2, L-3}, which
// needs L >= 7 to be three distinct layers. Errors name eagle_aux_hidden_state_layer_ids.
std::vector<int32_t> eagle3_feature_layers(const HeadConfig& c, int64_t target_layers,
                                           const std::string& where);

}  // namespace eagle2
