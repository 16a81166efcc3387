// Many sequences decoded together, as a server runs them: add sequences, step them all at once,
// read each one's tokens and statistics. Every step drafts one tree per live sequence and verifies
// all of them in ONE target forward over a shared KV memory (each weight read once for all);
// sequences join and leave between steps. Each sequence's tokens are exactly what generate_plain
// or generate_speculative gives it alone with the same options.
// One thread at a time calls an Engine (a server runs it on one scheduler thread); it borrows its
// model, threads, cost and heads (all must outlive it). Errors: eagle2::Error (eagle2/error.h);
// tokens(), stats() and drafted() of an id that was never added or was removed are an Error too;
// the vectors they return by reference live until remove(id) (step() appends to them).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/logprobs.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"

namespace eagle2::api {

// One generated token under the target (GenerateOptions::logprobs >= 0): its log-prob and the
// most likely tokens of the distribution it was chosen from, most likely first; the numbers
// path_logprobs (eagle2/logprobs.h) gives for the same position.
struct TokenLogprobs {
  double logprob = 0;
  std::vector<TokenLogprob> top;
};

// What one step did (a server's metrics).
struct StepReport {
  int64_t sequences = 0;     // sequences with rows in the step's forward (decoding or prefilling)
  int64_t rows = 0;          // rows of the forward: draft trees, single tokens, prompt chunks
  int64_t prefill_rows = 0;  // of which prompt rows
  std::vector<int64_t> accepted;  // per verified sequence: draft tokens accepted
  int64_t committed = 0;          // tokens the verified sequences committed (bonus included)
  double draft_seconds = 0;       // drafting, all sequences
  double forward_seconds = 0;     // the step's target forward and verification
};

class Engine {
 public:
  // kv_tokens: the KV memory all sequences share, in tokens; context: each sequence's limit
  // (prompt included). `cost`: needed by dynamic:auto drafters, whose trees are then sized
  // together for each whole step (docs/SPECULATIVE.md "Trees sized for the whole batch"), under
  // the cost's multi-sequence curves when it has them. The model, the threads, the cost and every
  // head given to add() must outlive the engine.
  Engine(Model& model, int64_t kv_tokens, int64_t context, Threads& threads,
         const VerifyCost* cost = nullptr);
  ~Engine();
  Engine(const Engine&) = delete;
  // The kv_tokens that hold `sequences` whole contexts at once (the memory is handed out in
  // blocks, so this is more than sequences * context when context is not a whole number of them).
  static int64_t kv_tokens_for(int64_t sequences, int64_t context);
  Engine& operator=(const Engine&) = delete;

  // One suffix index over the outputs of all this engine's sequences (of at most max_bytes, in
  // [1 MiB, 64 GiB], oldest outputs evicted first): suffix drafters of sequences added from now on
  // also draft from it and publish their outputs to it (docs/SPECULATIVE.md "Suffix decoding",
  // eagle2 serve --suffix-scope server). Without it each suffix drafter indexes its own sequence.
  void share_suffix_index(int64_t max_bytes);
  // The shared index's size now (all zero without one): what its bound counts (bytes, at most
  // max_bytes), its node storage allocated (node_slots, live or free: at most max_nodes),
  // the outputs it keeps and those it has evicted, oldest first.
  struct SuffixIndexUsage {
    int64_t bytes = 0, max_bytes = 0, node_slots = 0, max_nodes = 0, documents = 0, evictions = 0;
  };
  SuffixIndexUsage suffix_index_usage() const;

  // Adds a sequence, prefilled at the next step and decoded with the drafter of `spec` ("plain"
  // for plain decoding; `head` for the EAGLE drafters). What the drafters learn is kept per (head,
  // temperature) for the engine's lifetime and shared by its sequences. Returns the sequence's id
  // (counting up from 0, never reused). Error for an empty prompt, one that does not fit the
  // context, invalid sampling options or a spec the head cannot serve.
  int64_t add(std::vector<int32_t> prompt, const GenerateOptions& options, const DrafterSpec& spec,
              Head* head = nullptr);

  // One step, one target forward for every live sequence: each decoding sequence's draft tree and
  // each new sequence's next prompt chunk; each decoding sequence commits its accepted tokens and
  // bonus, and a sequence whose prompt is in gets its first token. A sequence that reaches its
  // token limit, an EOS or the end of its context finishes (its KV memory is freed at once).
  // Returns the live sequences left.
  // Throws when the forward fails (last_failure_in_forward()) or every sequence of the step failed
  // alone; a failure of some sequences only is reported by failed_in_last_step().
  int64_t step();
  // One step for sequence `id` alone, the others taking no part: after a step() that failed in
  // its forward (last_failure_in_forward(): it kept nothing of its work), a server steps its
  // sequences one by one, so that only the ones that fail alone fail. The tokens are those step()
  // would commit. No-op once finished.
  int64_t step_alone(int64_t id);
  // Whether the last step() that threw failed in its target forward: only then did it keep
  // nothing of its work, so that its sequences may be stepped again (step_alone) with their exact
  // tokens. A failure in drafting or verification fails its own sequence alone (below).
  bool last_failure_in_forward() const;
  // The sequences that failed alone in the last step() or step_alone(): a sequence whose drafter,
  // verification or prompt progress threw is finished there (its KV memory and drafter released,
  // finished(id) true, its tokens so far readable but incomplete) while the others decode on with
  // their tokens unchanged; step() then returns normally when any sequence of the step survived,
  // and throws (the first failure's exception) only when all failed. A server fails exactly these
  // requests. It stays valid when step() threw, whether every sequence failed or the forward
  // failed (sequences whose drafting failed before the forward are ended and named even then: do
  // not step them again), until the next step() or step_alone(), which clear it (a no-op
  // step_alone of a finished sequence too). Empty after a step without one; never throws. Not
  // thread-safe, like every Engine call: read it on the thread that steps.
  const std::vector<int64_t>& failed_in_last_step() const;

  int64_t live() const;  // sequences not finished
  bool finished(int64_t id) const;
  // Whether sequence `id` ended by a failure of its own (its drafter, verification or prompt
  // progress threw in some step: failed_in_last_step() named it then): finished(id) is true too
  // and its stats() look like any ended sequence's, but its tokens are incomplete. Unlike
  // failed_in_last_step() it stays true after later steps, until remove(id): check it for every
  // finished sequence whose output you use. Error for an id never added or removed. Not
  // thread-safe, like every Engine call.
  bool failed(int64_t id) const;
  const std::vector<int32_t>& tokens(int64_t id) const;  // generated so far (EOS not included)
  Stats stats(int64_t id) const;
  // Per generated token: non-zero when it was an accepted draft token, 0 when the target's own (a
  // bonus, the first token, plain decoding). Parallel to tokens(id). A drafted token of a hybrid
  // tree (dynamic...+suffix) also says where it came from: kDraftedByHead and/or
  // kDraftedBySuffix set (both when both sources drafted it); other drafters' tokens are 1.
  static constexpr uint8_t kDraftedByHead = 2, kDraftedBySuffix = 4;
  const std::vector<uint8_t>& drafted(int64_t id) const;
  // With GenerateOptions::logprobs >= 0: the log-probs of generated tokens [from,
  // tokens(id).size()) (the target's verified logits, so the same with and without drafting); empty
  // otherwise.
  std::vector<TokenLogprobs> logprobs(int64_t id, size_t from) const;
  const StepReport& last_step() const;
  int64_t kv_blocks_used() const;
  int64_t kv_blocks_total() const;
  // Ends a sequence now (a no-op once finished): its KV memory is freed at once; its tokens and
  // statistics stay readable until remove().
  void cancel(int64_t id);
  // Forgets a sequence, finished or not: its drafter and KV memory are released.
  void remove(int64_t id);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eagle2::api
