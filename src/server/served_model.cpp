#include "server/served_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "eagle2/error.h"
#include "server/api_error.h"

namespace eagle2::server {

namespace fs = std::filesystem;

namespace {

// A folder's name, also for "models/code-lm/" (whose filename() is empty).
std::string folder_name(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// Whether the folder's tokenizer_config.json names a chat template: a model without one is
// served without the chat endpoint, while a template that is there but broken fails the start.
bool has_config_template(const std::string& dir) {
  const std::string path = dir + "/tokenizer_config.json";
  if (!fs::is_regular_file(path)) return false;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json config = nlohmann::json::parse(text.str(), nullptr, false);
  return config.is_object() && config.contains("chat_template") &&
         !config["chat_template"].is_null();
}

// The text of a special token id as a chat template's bos_token/eos_token fallback.
std::optional<std::string> special_text(const api::Tokenizer& tok, int32_t id) {
  if (id < 0 || id >= tok.vocab_size()) return std::nullopt;
  return tok.piece(id);
}

}  // namespace

ServedModel::ServedModel(const ServerOptions& o)
    : id_(folder_name(o.model_dir)), test_fault_marker_(o.test_fault_marker) {
  if (!o.model_dir.ends_with(".gguf") && !fs::exists(o.model_dir + "/tokenizer.json") &&
      !fs::exists(o.model_dir + "/tokenizer.model"))
    fail(o.model_dir, ": no tokenizer.json or tokenizer.model (the server speaks text)");
  model_.emplace(api::Model::load(o.model_dir));
  tok_.emplace(api::Tokenizer::open(o.model_dir));
  const int64_t max_positions = model_->config().max_position_embeddings;
  ctx_ = o.ctx > 0 ? o.ctx : std::min<int64_t>(2048, max_positions);

  if (!o.head_dir.empty()) {
    head_dir_ = o.head_dir;
    head_.emplace(api::Head::load(o.head_dir, *model_));
    const int64_t n = head_->default_draft_vocab(o.head_dir, o.draft_vocab);
    if (n > 0) head_->restrict_vocab(o.head_dir + "/draft_vocab.tsv", n);
  }
  const std::string spec = !o.spec.empty() ? o.spec : head_ ? kDefaultSpec : "plain";
  default_spec_ = api::parse_drafter_spec(spec);
  if (!default_spec_.head.empty())
    fail("--spec ", spec,
         ": a head folder after '@' is for eagle2 bench --drafters; the server "
         "drafts with --draft HEAD_DIR");
  if (default_spec_.needs_head() && !head_)
    fail("--spec ", spec, " needs an EAGLE head: pass --draft HEAD_DIR");

  make_policy(o);  // before the slow part: a wrong --drafter fails at once

  const api::ModelConfig& mc = model_->config();
  kv_costs_.context = ctx_;
  kv_costs_.block_tokens = api::Engine::kv_tokens_for(1, 1);
  kv_costs_.block_bytes = kv_costs_.block_tokens * mc.num_layers * mc.num_kv_heads * mc.head_dim *
                          2 * static_cast<int64_t>(sizeof(float));
  kv_costs_.head_token_bytes = head_ ? head_->kv_bytes_per_token() : 0;
  for (const auto& [name, spec] : policy_.drafters) {
    if (!spec.head.empty())
      kv_costs_.folder_token_bytes[spec.head] = folder_kv_token_bytes(spec.head, true);
    if (spec.kind == "sps")
      kv_costs_.folder_token_bytes[spec.folder] = folder_kv_token_bytes(spec.folder, false);
  }
  (void)scheduler_options(o);  // a budget too small fails the start now, not after the load

  if (!o.chat_template.empty())
    chat_.emplace(api::ChatTemplate::from_file(o.chat_template));
  else if (has_config_template(o.model_dir))
    chat_.emplace(api::ChatTemplate::from_model_dir(o.model_dir));

  threads_.emplace(o.threads > 0 ? o.threads : api::default_thread_count());
  // Measured once at start-up for every request: dynamic:auto trees and the scheduler's
  // batch-wide budget both size trees from it, the latter from steps of 1 .. parallel sequences.
  cost_.emplace(api::VerifyCost::measure(*model_, ctx_, *threads_, o.parallel));
  // Each offered drafter with weights built once now, loading them, so that a wrong folder fails
  // the start and not the first request that names it (the engine then loads them once for all
  // the requests that do).
  for (const auto& [name, spec] : policy_.drafters)
    if (loads_weights(spec))
      api::Drafter::make(spec, *model_, head(), *threads_, ctx_, 0.0f, cost());
}

SchedulerOptions ServedModel::scheduler_options(const ServerOptions& o) const {
  SchedulerOptions s;
  s.parallel = o.parallel;
  s.max_queue = o.max_queue;
  s.context = ctx_;
  s.before_step = o.before_step;  // tests only
  s.suffix_index_bytes = o.suffix_scope == "server" ? o.suffix_memory : 0;
  const int64_t context_blocks = api::Engine::kv_tokens_for(1, ctx_) / kv_costs_.block_tokens;
  const int64_t whole = context_blocks * kv_costs_.block_bytes;
  const int64_t drafter = kv_need(kv_costs_, 0, 0, default_spec_).drafter_bytes;
  s.kv_block_bytes = kv_costs_.block_bytes;
  if (o.max_kv_memory <= 0) {
    // As before the budget existed: every slot can hold a whole context and the largest drafter
    // cache any request may ask (the operator's drafters, or the deepest EAGLE tree within the
    // request limits), so no valid request waits for memory or is refused for it.
    int64_t largest = drafter;
    for (const auto& [name, spec] : policy_.drafters)
      largest = std::max(largest, kv_need(kv_costs_, 0, 0, spec).drafter_bytes);
    if (head_) {
      api::DrafterSpec deepest = api::parse_drafter_spec("dynamic");
      deepest.dynamic.depth = policy_.draft.max_depth;
      deepest.dynamic.top_k = policy_.draft.max_top_k;
      largest = std::max(largest, kv_need(kv_costs_, 0, 0, deepest).drafter_bytes);
      // A sampled tree feeds its head up to its total tokens (within --max-draft-tokens).
      api::DrafterSpec widest = api::parse_drafter_spec("sampled");
      widest.dynamic.total_tokens = policy_.draft.max_tokens;
      largest = std::max(largest, kv_need(kv_costs_, 0, 0, widest).drafter_bytes);
    }
    s.kv_pool_blocks = o.parallel * context_blocks;
    s.kv_budget_bytes = o.parallel * (whole + largest);
    return s;
  }
  if (o.max_kv_memory < whole + drafter) {
    const int64_t MiB = 1 << 20;
    fail("--max-kv-memory ", o.max_kv_memory, ": one request with the whole context (", ctx_,
         " tokens) and the default drafter needs ", (whole + drafter + MiB - 1) / MiB, " MiB (",
         whole + drafter, " bytes); give at least that, or a smaller --ctx");
  }
  // As many whole contexts with a default drafter's cache as the budget holds (at most one per
  // slot): their contexts are the pool, shared by reservation, and the rest of the budget is for
  // the drafters' caches (an EAGLE head's spans the whole context, however short the request).
  const int64_t whole_contexts = std::min<int64_t>(o.parallel, o.max_kv_memory / (whole + drafter));
  s.kv_pool_blocks = whole_contexts * context_blocks;
  s.kv_budget_bytes = o.max_kv_memory;
  return s;
}

void ServedModel::make_policy(const ServerOptions& o) {
  policy_.max_tokens = o.max_tokens > 0 ? o.max_tokens : ctx_;
  policy_.draft = {o.max_draft_tokens, o.max_draft_depth, o.max_draft_top_k};
  for (const auto& [name, text] : o.drafters) {
    const std::string where = "--drafter " + name + "=" + text;
    try {
      check_drafter_name(name);
    } catch (const Error& e) {
      fail("--drafter ", name, "=", text, ": ", e.what());
    }
    if (policy_.drafters.contains(name)) fail(where, ": the name '", name, "' is given twice");
    api::DrafterSpec spec = api::parse_drafter_spec(text);  // its errors name the spec
    if (spec.needs_head() && spec.head.empty() && !head_)
      fail(where, " needs an EAGLE head: pass --draft HEAD_DIR");
    policy_.drafters.emplace(name, std::move(spec));
  }
}

std::string ServedModel::head_name() const {
  return head_ ? folder_name(head_dir_) : "none";
}

std::vector<int32_t> ServedModel::prompt_tokens(const CompletionRequest& r) const {
  const api::Tokenizer& tok = *tok_;
  if (r.endpoint == Endpoint::Completions && r.prompt_is_ids) {
    for (size_t i = 0; i < r.prompt_ids.size(); ++i)
      if (r.prompt_ids[i] >= tok.vocab_size())
        throw ApiError(400,
                       "prompt[" + std::to_string(i) + "]: token id " +
                           std::to_string(r.prompt_ids[i]) + " is outside the vocabulary (" +
                           std::to_string(tok.vocab_size()) + " tokens)",
                       "prompt", "invalid_value");
    return r.prompt_ids;
  }
  try {
    // BOS as the tokenizer's config asks, exactly as `eagle2 generate -p` does.
    if (r.endpoint == Endpoint::Completions) return tok.encode(r.prompt, tok.adds_bos());
    if (!chat_)
      throw ApiError(400,
                     "this model has no chat template: start the server with --chat-template "
                     "FILE, or use /v1/completions",
                     "messages", "no_chat_template");
    const std::optional<std::string> bos =
        chat_->bos_token() ? chat_->bos_token() : special_text(tok, tok.bos_id());
    const std::optional<std::string> eos =
        chat_->eos_token() ? chat_->eos_token() : special_text(tok, tok.eos_id());
    const std::string text = chat_->render(r.messages_json, "messages", true, bos, eos);
    // A template that writes the BOS text itself ("{{ bos_token }}...") means the BOS token: it
    // becomes the id (a SentencePiece model would spell "<s>" as three characters), never a
    // second BOS. Otherwise the rendered text is a prompt like any other.
    if (bos && !bos->empty() && text.starts_with(*bos))
      return tok.encode(std::string_view(text).substr(bos->size()), true);
    return tok.encode(text, tok.adds_bos());
  } catch (const Error& e) {
    throw ApiError(400, e.what(), r.endpoint == Endpoint::Chat ? "messages" : "prompt",
                   "invalid_value");
  }
}

GenerationRequest ServedModel::generation_request(const CompletionRequest& r,
                                                  std::vector<int32_t> prompt) const {
  GenerationRequest g;
  g.prompt = std::move(prompt);
  g.spec = r.speculative ? *r.speculative : default_spec_;
  if (g.spec.needs_head() && g.spec.head.empty() && !head_)
    throw ApiError(400,
                   "speculative: '" + g.spec.label +
                       "' needs an EAGLE head and this server has "
                       "none (start it with --draft HEAD_DIR)",
                   "speculative", "invalid_value");
  g.options.sampling = r.sampling;
  // Without max_tokens a chat answer runs to an EOS or the end of the context (the engine stops
  // there), as OpenAI's chat endpoint does; a completion gets OpenAI's 16 tokens.
  g.options.max_new_tokens = r.max_tokens                   ? *r.max_tokens
                             : r.endpoint == Endpoint::Chat ? ctx_
                                                            : kDefaultCompletionTokens;
  g.options.stop_at_eos = true;
  g.options.logprobs = r.logprobs;
  if (!test_fault_marker_.empty()) {
    // Tests only (ServerOptions::test_fault_marker): the text the client sent is searched; the
    // marker is the operator's, so no client can turn this on.
    const std::string& text = r.endpoint == Endpoint::Chat ? r.messages_json : r.prompt;
    if (text.find(test_fault_marker_ + ":drafting") != std::string::npos)
      g.options.test_fault = api::GenerateOptions::TestFault::Drafting;
    else if (text.find(test_fault_marker_ + ":verification") != std::string::npos)
      g.options.test_fault = api::GenerateOptions::TestFault::Verification;
    else if (text.find(test_fault_marker_ + ":admission") != std::string::npos)
      g.options.test_fault = api::GenerateOptions::TestFault::Admission;
  }
  g.kv =
      kv_need(kv_costs_, static_cast<int64_t>(g.prompt.size()), g.options.max_new_tokens, g.spec);
  return g;
}

}  // namespace eagle2::server
