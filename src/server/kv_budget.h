// The KV memory a request can need at most, known before it is admitted, so that the scheduler
// admits only what fits the server's budget (--max-kv-memory) and no step ever fails for want of
// memory. Two parts: blocks of the target's shared KV pool (the prompt, max_tokens and the
// largest tree a cycle verifies, within the context), and the drafter's own caches (an EAGLE
// head's, a draft model's), allocated when the request is admitted.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "eagle2/drafter.h"

namespace eagle2::server {

struct KvNeed {
  int64_t target_blocks = 0;  // of the shared pool
  int64_t drafter_bytes = 0;  // the drafter's own caches
};

// What sizes a request's KV memory on this server (filled at start-up by ServedModel).
struct KvCosts {
  int64_t context = 0;           // each request's context (tokens)
  int64_t block_tokens = 16;     // tokens per pool block
  int64_t block_bytes = 0;       // bytes of one pool block (all layers, keys and values)
  int64_t head_token_bytes = 0;  // the server's EAGLE head's cache per token (0: no head)
  // Per token of an operator's drafter with weights of its own, by folder (sps: the draft model's
  // layers; "@HEAD": that head's one layer).
  std::map<std::string, int64_t> folder_token_bytes;
};

// The most rows one cycle's draft tree can add to the target's cache (root included).
int64_t tree_rows_bound(const api::DrafterSpec& spec);

KvNeed kv_need(const KvCosts& costs, int64_t prompt_tokens, int64_t max_new_tokens,
               const api::DrafterSpec& spec);

// KV bytes per token of the model in a folder (config.json), for a draft model or a head:
// layers x KV heads x head size x keys and values x float32. 0 when it cannot be read (the
// drafter is then built at start-up anyway, which fails on a bad folder).
int64_t folder_kv_token_bytes(const std::string& dir, bool head);

}  // namespace eagle2::server
