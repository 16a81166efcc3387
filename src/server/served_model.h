// The model a server serves and everything loaded with it: the target, the optional EAGLE head,
// the tokenizer, the chat template, the worker threads and the verify cost curve; and how a
// parsed request becomes the scheduler's GenerationRequest (prompt tokens, token limit, drafter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eagle2/chat.h"
#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "eagle2/tokenizer.h"
#include "server/kv_budget.h"
#include "server/openai_request.h"
#include "server/request_policy.h"
#include "server/scheduler.h"
#include "server/server_options.h"

namespace eagle2::server {

class ServedModel {
 public:
  // Loads everything; Error naming what is wrong (a missing tokenizer, a head that does not fit,
  // a default spec the head cannot serve, a broken template, ...).
  explicit ServedModel(const ServerOptions& options);

  const std::string& id() const { return id_; }  // the model folder's name: /v1/models' id
  std::string head_name() const;                 // the head folder's name, or "none"
  const api::DrafterSpec& default_spec() const { return default_spec_; }
  int64_t context() const { return ctx_; }
  bool has_chat_template() const { return chat_.has_value(); }
  // The drafters a request may name (--drafter) and the server's limits on a request.
  const RequestPolicy& policy() const { return policy_; }

  // The prompt's tokens exactly as `eagle2 generate -p` makes them (chat: the rendered
  // conversation). ApiError 400 for ids outside the vocabulary, a template that raises, text
  // that is not UTF-8, no chat template.
  std::vector<int32_t> prompt_tokens(const CompletionRequest& request) const;
  // What the scheduler runs. ApiError 400 for a spec that needs a head this server lacks.
  GenerationRequest generation_request(const CompletionRequest& request,
                                       std::vector<int32_t> prompt) const;

  // The scheduler's options: slots, queue, context and the KV memory (pool and budget) from
  // --max-kv-memory. Error when the budget does not hold one whole context and its drafter.
  SchedulerOptions scheduler_options(const ServerOptions& options) const;
  const KvCosts& kv_costs() const { return kv_costs_; }

  const api::Tokenizer& tokenizer() const { return *tok_; }
  api::Model& model() { return *model_; }
  api::Head* head() { return head_ ? &*head_ : nullptr; }
  api::Threads& threads() { return *threads_; }
  const api::VerifyCost* cost() const { return cost_ ? &*cost_ : nullptr; }

 private:
  void make_policy(const ServerOptions& options);

  std::string id_, head_dir_;
  std::optional<api::Model> model_;
  std::optional<api::Head> head_;  // after the model: destroyed before it
  std::optional<api::Tokenizer> tok_;
  std::optional<api::ChatTemplate> chat_;
  std::optional<api::Threads> threads_;
  std::optional<api::VerifyCost> cost_;
  api::DrafterSpec default_spec_;
  RequestPolicy policy_;
  KvCosts kv_costs_;
  int64_t ctx_ = 0;
  std::string test_fault_marker_;  // ServerOptions::test_fault_marker
};

}  // namespace eagle2::server
