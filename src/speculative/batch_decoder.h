// Many independent sequences decoded together: each step, every live sequence drafts its own tree
// (or none, for plain decoding), and all the trees are verified in ONE target forward over a
// shared paged KV pool, so each target weight is read once per step for all of them. Each
// sequence's tokens are exactly what it would produce alone (speculative_generate or
// generate_plain with the same options): greedy by batch invariance, sampled because every token
// is drawn with the uniform of its (seed, output position). This is the engine of a server with
// continuous batching: sequences join and leave between steps.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "speculative/drafter.h"
#include "speculative/generation.h"
#include "speculative/speculative_decoder.h"

namespace eagle2 {

class BatchDecoder {
 public:
  // kv_pool: the target's KV memory shared by all sequences (LlamaModel::make_pool); context:
  // each sequence's context limit (tokens, prompt included).
  BatchDecoder(LlamaModel& model, std::shared_ptr<KvPool> kv_pool, int64_t context,
               ThreadPool& pool);
  ~BatchDecoder();
  BatchDecoder(const BatchDecoder&) = delete;
  BatchDecoder& operator=(const BatchDecoder&) = delete;

  // Adds a sequence that will be prefilled at the next step. drafter == nullptr: plain decoding.
  // Returns its id (ids count up from 0 and are never reused). Error for an empty prompt, a
  // prompt that does not fit the context, or invalid sampling options.
  int64_t add(std::vector<int32_t> prompt, const GenerationOptions& options,
              std::unique_ptr<Drafter> drafter);

  // One step: prefills the sequences added since the last step (together, in chunks), then one
  // draft per live sequence and one target forward for all their trees; emits each sequence's
  // accepted tokens and bonus. A sequence that reaches its limit, EOS or the end of its context
  // finishes (its KV memory goes back to the pool at once). Returns the number of live
  // sequences left.
  int64_t step();

  int64_t live() const;  // sequences not finished
  bool finished(int64_t id) const;
  const std::vector<int32_t>& tokens(int64_t id) const;  // generated so far (EOS not included)
  const SpeculativeStats& stats(int64_t id) const;
  // Forgets a sequence (finished or not): its drafter and KV memory are released.
  void remove(int64_t id);

 private:
  struct Sequence;
  Sequence& at(int64_t id);
  const Sequence& at(int64_t id) const;
  void start(const std::vector<Sequence*>& newcomers);
  bool emit(Sequence& s, int32_t token);
  void finish(Sequence& s);

  LlamaModel& model_;
  std::shared_ptr<KvPool> kv_pool_;
  int64_t context_;
  ThreadPool& pool_;
  std::vector<std::unique_ptr<Sequence>> sequences_;  // by id; null once removed
};

}  // namespace eagle2
