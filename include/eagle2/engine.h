// Many sequences decoded together, as a server runs them: add sequences, step them all at once,
// read each one's tokens and statistics. Every step drafts one tree per live sequence and verifies
// all of them in ONE target forward over a shared KV memory (each weight read once for all);
// sequences join and leave between steps. Each sequence's tokens are exactly what generate_plain
// or generate_speculative gives it alone with the same options.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

class Engine {
 public:
  // kv_tokens: the KV memory all sequences share, in tokens; context: each sequence's limit
  // (prompt included). `cost`: needed by dynamic:auto drafters. The model, the threads, the cost
  // and every head given to add() must outlive the engine.
  Engine(Model& model, int64_t kv_tokens, int64_t context, Threads& threads,
         const VerifyCost* cost = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Adds a sequence, prefilled at the next step and decoded with the drafter of `spec` ("plain"
  // for plain decoding; `head` for the EAGLE drafters). What the drafters learn is kept per (head,
  // temperature) for the engine's lifetime and shared by its sequences. Returns the sequence's id
  // (counting up from 0, never reused). Error for an empty prompt, one that does not fit the
  // context, invalid sampling options or a spec the head cannot serve.
  int64_t add(std::vector<int32_t> prompt, const GenerateOptions& options,
              const DrafterSpec& spec, Head* head = nullptr);

  // One step for every live sequence: the new ones are prefilled, then each drafts and all are
  // verified in one forward; each commits its accepted tokens and bonus. A sequence that reaches
  // its token limit, an EOS or the end of its context finishes (its KV memory is freed at once).
  // Returns the live sequences left.
  int64_t step();

  int64_t live() const;  // sequences not finished
  bool finished(int64_t id) const;
  const std::vector<int32_t>& tokens(int64_t id) const;  // generated so far (EOS not included)
  Stats stats(int64_t id) const;
  // Forgets a sequence, finished or not: its drafter and KV memory are released.
  void remove(int64_t id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::api
