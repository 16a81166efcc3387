// Many independent sequences decoded together: each step, every live sequence drafts its own tree
// (or none, for plain decoding), and all the trees are verified in ONE target forward over a
// shared paged KV pool, so each target weight is read once per step for all of them. Each
// sequence's tokens are exactly what it would produce alone (speculative_generate or
// generate_plain with the same options): greedy by batch invariance, sampled because every token
// is drawn with the uniform of its (seed, output position). This is the engine of a server with
// continuous batching: sequences join and leave between steps.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "model/row_logprobs.h"
#include "speculative/batch_budget.h"
#include "speculative/batch_pacing.h"
#include "speculative/drafter.h"
#include "speculative/feature_capture.h"
#include "speculative/generation.h"
#include "speculative/speculative_decoder.h"

namespace eagle2 {

// What one step did (for a server's metrics).
struct StepReport {
  int64_t sequences = 0;     // sequences with rows in the step's forward (decoding or prefilling)
  int64_t rows = 0;          // rows of the forward: trees, single tokens and prefill chunks
  int64_t prefill_rows = 0;  // of which prompt rows
  std::vector<int64_t> accepted;  // per verified sequence: draft tokens accepted
  int64_t committed = 0;          // tokens committed by the verified sequences (bonus included)
  double draft_seconds = 0;       // drafting, all sequences
  double forward_seconds = 0;     // the step's target forward and verification
};

class BatchDecoder {
 public:
  // kv_pool: the target's KV memory shared by all sequences (LlamaModel::make_pool); context:
  // each sequence's context limit (tokens, prompt included). batch_cost: when given, the trees of
  // drafters with a choosable size (dynamic:auto) are sized together for the whole step
  // (batch_budget.h); without it each drafter sizes its own tree.
  BatchDecoder(LlamaModel& model, std::shared_ptr<KvPool> kv_pool, int64_t context,
               ThreadPool& pool, std::shared_ptr<const BatchCostModel> batch_cost = nullptr);
  ~BatchDecoder();
  BatchDecoder(const BatchDecoder&) = delete;
  BatchDecoder& operator=(const BatchDecoder&) = delete;

  // Adds a sequence that will be prefilled at the next step. drafter == nullptr: plain decoding.
  // Returns its id (ids count up from 0 and are never reused). Error for an empty prompt, a
  // prompt that does not fit the context, or invalid sampling options.
  int64_t add(std::vector<int32_t> prompt, const GenerationOptions& options,
              std::unique_ptr<Drafter> drafter);

  // One step, ONE target forward: every decoding sequence drafts its tree (the sizes chosen
  // together when there is a batch cost model) and every sequence still reading its prompt adds
  // its next chunk (GenerationOptions::prefill_chunk rows); then each tree is verified and each
  // sequence emits its accepted tokens and bonus, and a sequence whose prompt is complete gets its
  // first token and starts decoding at the next step. A sequence that reaches its limit, EOS or
  // the end of its context finishes (its KV memory goes back to the pool at once). Returns the
  // number of live sequences left.
  // Faults stay per sequence: a sequence whose drafting, verification or prompt progress throws
  // fails alone (it finishes with its KV rows and drafter released: failed_in_last_step()); the
  // others' tokens are unchanged. The step throws only when its forward fails
  // (last_failure_in_forward()), when a batch-wide part fails, or when every sequence that took
  // part failed alone (the first failure's exception).
  int64_t step();
  // One step for sequence `id` alone: the others take no part and keep their state. What a
  // server does with the sequences of a step that failed in its forward (which kept nothing of
  // its work: last_failure_in_forward()), one by one, so that one sequence's failure is its own.
  // Its tokens are those of step() (a sequence's tokens never depend on its company). A no-op for a
  // finished sequence (it still clears failed_in_last_step()); Error for an unknown id.
  int64_t step_alone(int64_t id);
  // Whether the last step() that threw failed in its one target forward. Only then did it keep
  // nothing of its work (its KV rows dropped, nothing verified, emitted or accepted; the trees
  // are drafted again), so that its sequences may be stepped again (step_alone) with their exact
  // tokens. A failure in drafting or verification fails its sequence alone (below).
  bool last_failure_in_forward() const { return failed_in_forward_; }
  // The sequences that failed alone in the last step() or step_alone() (returned or threw), in
  // the order they failed: each is finished (finished(id) is true, its tokens so far readable)
  // but its output is incomplete (failed(id) stays true); a server fails their requests. Valid too
  // after a step() that threw, until the next step() or step_alone(). Empty after a step without
  // one.
  const std::vector<int64_t>& failed_in_last_step() const { return failed_in_step_; }

  int64_t live() const;  // sequences not finished
  bool finished(int64_t id) const;
  // Whether the sequence finished by a failure of its own (failed alone in some step: its tokens
  // are incomplete), not by its limit, EOS, context or cancel(). Stays true until remove().
  bool failed(int64_t id) const;
  const std::vector<int32_t>& tokens(int64_t id) const;  // generated so far (EOS not included)
  const SpeculativeStats& stats(int64_t id) const;
  // Per generated token, parallel to tokens(id): 0 the target's own (a cycle's bonus, or the first
  // token after the prompt); kDraftedToken | (DraftTree::sources bits << 1) an accepted draft
  // token (sources: hybrid trees only; api::Engine::drafted).
  static constexpr uint8_t kDraftedToken = 1;
  const std::vector<uint8_t>& drafted(int64_t id) const;
  // With GenerationOptions::logprobs >= 0: per generated token, its log-prob and the most likely
  // tokens of the target's distribution it was chosen from (the verified logits: the same with
  // and without drafting). Empty otherwise. Parallel to tokens(id).
  const std::vector<RowLogprobs>& logprobs(int64_t id) const;
  const StepReport& last_step() const { return last_step_; }
  const KvPool& kv_pool() const { return *kv_pool_; }
  // With a batch cost model: whether drafting pays for the batch (for tests and diagnostics).
  const BatchPacing& batch_pacing() const { return batch_pacing_; }
  // Ends a sequence now (a no-op when it has finished): its drafter and KV memory are released,
  // its tokens and statistics stay readable until remove().
  void cancel(int64_t id);
  // Forgets a sequence (finished or not): its drafter and KV memory are released.
  void remove(int64_t id);

 private:
  struct Sequence;
  Sequence& at(int64_t id);
  const Sequence& at(int64_t id) const;
  void begin_decoding(Sequence& s, const float* last_logits);
  void verify(Sequence& s, const float* logits, const FeatureRows& features,
              double forward_seconds);
  // logits: the target's row the token was chosen from.
  bool emit(Sequence& s, int32_t token, uint8_t drafted, const float* logits);
  void finish(Sequence& s);
  void fail_alone(Sequence& s, std::exception_ptr error);
  void reset_failures();  // of the last step: failed_in_forward_, failed_in_step_, first_failure_
  // GenerationOptions::test_fault: throws when s's options inject `at` by now (tests only).
  void injected_fault(const Sequence& s, GenerationOptions::TestFault at) const;
  int64_t step_sequences();  // step()'s work; returns the sequences of the step that did not fail

  LlamaModel& model_;
  std::shared_ptr<KvPool> kv_pool_;
  int64_t context_;
  ThreadPool& pool_;
  std::shared_ptr<const BatchCostModel> batch_cost_;
  Sequence* alone_ = nullptr;            // step_alone(): the only sequence the step looks at
  bool failed_in_forward_ = false;       // last_failure_in_forward()
  std::vector<int64_t> failed_in_step_;  // failed_in_last_step()
  std::exception_ptr first_failure_;     // of failed_in_step_'s: rethrown when none survived
  BatchPacing batch_pacing_;             // with batch_cost_: whether drafting pays for the batch
  std::vector<std::unique_ptr<Sequence>> sequences_;  // by id; null once removed
  StepReport last_step_;
  std::vector<float> path_features_;    // scratch: the accepted path's features
  std::vector<int32_t> target_argmax_;  // scratch: the target's argmax per tree node
};

}  // namespace eagle2
