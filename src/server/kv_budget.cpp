#include "server/kv_budget.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace eagle2::server {

namespace {

int64_t blocks_for(int64_t tokens, int64_t block) {
  return (tokens + block - 1) / block;
}

// Nodes an EAGLE drafter feeds its head per cycle, as EagleDrafter sizes its cache.
int64_t fed_nodes(const api::DrafterSpec& s) {
  if (s.kind == "chain") return int64_t{s.chain_depth} + 1;
  if (s.kind == "static") return static_cast<int64_t>(s.choices.size());
  if (s.kind == "sampled") return int64_t{s.dynamic.total_tokens};
  return int64_t{s.dynamic.depth} * s.dynamic.top_k;  // dynamic, dynamic:auto
}

}  // namespace

int64_t tree_rows_bound(const api::DrafterSpec& s) {
  if (s.kind == "plain" || s.kind == "none") return 1;
  // A chain or a lookup of depth D drafts D + 1 tokens after the root.
  if (s.kind == "lookup") return int64_t{s.lookup_depth} + 2;
  if (s.kind == "chain") return int64_t{s.chain_depth} + 2;
  if (s.kind == "static") return static_cast<int64_t>(s.choices.size()) + 1;
  if (s.kind == "sampled") return int64_t{s.dynamic.total_tokens};
  if (s.kind == "dynamic")
    return s.auto_budget ? api::DrafterSpec::kAutoMaxTokens : int64_t{s.dynamic.total_tokens};
  if (s.kind == "lookahead") {
    const auto& p = s.lookahead;
    return (int64_t{p.window} + p.verify_ngrams) * (int64_t{p.ngram_size} - 1) + 1;
  }
  if (s.kind == "sps") return 2 + int64_t{s.sps_top_k} * (int64_t{s.sps_depth} + 1);
  if (s.kind == "medusa" || s.kind == "hydra") return s.heads_tokens;
  if (s.kind == "suffix") return s.suffix.tokens;
  return api::DrafterSpec::kAutoMaxTokens;  // a kind added later: a generous bound
}

KvNeed kv_need(const KvCosts& c, int64_t prompt_tokens, int64_t max_new_tokens,
               const api::DrafterSpec& s) {
  KvNeed need;
  // The cache never holds more than the context (drafters draft within the room left); below
  // that, the prompt, every token to come and one cycle's tree on top of them.
  const int64_t tokens = std::min(c.context, prompt_tokens + max_new_tokens + tree_rows_bound(s));
  need.target_blocks = blocks_for(tokens, c.block_tokens);
  if (s.needs_head()) {
    // EagleDrafter's cache: the context plus every node it feeds in a cycle, plus one.
    const int64_t per_token =
        s.head.empty() ? c.head_token_bytes
                       : (c.folder_token_bytes.contains(s.head) ? c.folder_token_bytes.at(s.head)
                                                                : c.head_token_bytes);
    need.drafter_bytes =
        blocks_for(c.context + fed_nodes(s) + 1, c.block_tokens) * c.block_tokens * per_token;
  } else if (s.kind == "sps" && c.folder_token_bytes.contains(s.folder)) {
    need.drafter_bytes =
        blocks_for(c.context, c.block_tokens) * c.block_tokens * c.folder_token_bytes.at(s.folder);
  }
  return need;
}

int64_t folder_kv_token_bytes(const std::string& dir, bool head) {
  std::ifstream in(dir + "/config.json");
  if (!in) return 0;
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json c = nlohmann::json::parse(text.str(), nullptr, false);
  if (!c.is_object()) return 0;
  auto get = [&](const char* k, int64_t fallback) {
    return c.contains(k) && c[k].is_number_integer() ? c[k].get<int64_t>() : fallback;
  };
  const int64_t heads = get("num_attention_heads", 0);
  const int64_t kv_heads = get("num_key_value_heads", heads);
  const int64_t head_dim = get("head_dim", heads > 0 ? get("hidden_size", 0) / heads : 0);
  const int64_t layers = head ? 1 : get("num_hidden_layers", 0);
  if (kv_heads <= 0 || head_dim <= 0 || layers <= 0) return 0;
  return layers * kv_heads * head_dim * 2 * static_cast<int64_t>(sizeof(float));
}

}  // namespace eagle2::server
