#include "server/openai_response.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace eagle2::server {

namespace {

bool is_chat(const ResponseHeader& h) {
  return h.endpoint == Endpoint::Chat;
}

Json base(const ResponseHeader& h, const char* object) {
  Json j;
  j["id"] = h.id;
  j["object"] = object;
  j["created"] = h.created;
  j["model"] = h.model;
  return j;
}

Json tokens_json(const std::vector<TokenText>& tokens) {
  Json list = Json::array();
  for (const TokenText& t : tokens) {
    list.push_back({{"text", t.text}, {"drafted", t.drafted}, {"id", t.id}});
    if (!t.source.empty()) list.back()["source"] = t.source;
  }
  return list;
}

}  // namespace

ResponseHeader make_response_header(Endpoint endpoint, const std::string& model) {
  // Unique per process run: a random prefix drawn once, then a counter.
  static const uint64_t prefix = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter{0};
  char id[64];
  std::snprintf(id, sizeof id, "%s-%016llx%08llx", endpoint == Endpoint::Chat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(prefix),
                static_cast<unsigned long long>(counter.fetch_add(1)));
  ResponseHeader h;
  h.id = id;
  h.created = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  h.model = model;
  h.endpoint = endpoint;
  return h;
}

Json usage_json(const Usage& u) {
  Json j = {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"target_forwards", u.target_forwards},
            {"tau", u.tau}};
  if (u.head_drafted + u.suffix_drafted > 0) {
    j["drafted_by_source"] = {{"head", u.head_drafted}, {"suffix", u.suffix_drafted}};
    j["accepted_by_source"] = {{"head", u.head_accepted}, {"suffix", u.suffix_accepted}};
  }
  if (!u.drafted_by_depth.empty()) {
    j["drafted_by_depth"] = u.drafted_by_depth;
    j["accepted_by_depth"] = u.accepted_by_depth;
  }
  return j;
}

Json completion_json(const ResponseHeader& h, const std::string& text,
                     const std::string& finish_reason, const Usage& usage, Json logprobs) {
  Json j = base(h, is_chat(h) ? "chat.completion" : "text_completion");
  Json choice;
  choice["index"] = 0;
  if (is_chat(h))
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_reason;
  j["choices"] = Json::array({choice});
  j["usage"] = usage_json(usage);
  return j;
}

Json chunk_json(const ResponseHeader& h, const std::string& text,
                const std::vector<TokenText>& tokens, bool first, const std::string& finish_reason,
                bool usage_null, Json logprobs) {
  Json j = base(h, is_chat(h) ? "chat.completion.chunk" : "text_completion");
  Json choice;
  choice["index"] = 0;
  if (is_chat(h)) {
    Json delta = Json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (first && finish_reason.empty())) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = finish_reason.empty() ? Json(nullptr) : Json(finish_reason);
  j["choices"] = Json::array({choice});
  if (usage_null) j["usage"] = nullptr;
  if (!tokens.empty()) j["x_eagle2"] = {{"tokens", tokens_json(tokens)}};
  return j;
}

Json usage_chunk_json(const ResponseHeader& h, const Usage& usage) {
  Json j = base(h, is_chat(h) ? "chat.completion.chunk" : "text_completion");
  j["choices"] = Json::array();
  j["usage"] = usage_json(usage);
  return j;
}

// TextStream never splits a character, but byte-fallback tokens can still spell bytes that are
// not UTF-8; nlohmann's default would throw in the middle of a response.
std::string json_text(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string sse_event(const Json& data) {
  return "data: " + json_text(data) + "\n\n";
}

Json error_json(int status, const std::string& message, const std::string& param,
                const std::string& code) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 404 ? "not_found_error"
                     : status == 503 ? "overloaded_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  Json e;
  e["message"] = message;
  e["type"] = type;
  e["param"] = param.empty() ? Json(nullptr) : Json(param);
  e["code"] = code.empty() ? Json(nullptr) : Json(code);
  return {{"error", e}};
}

Json model_json(const std::string& model_id, int64_t created) {
  return {{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "eagle2"}};
}

Json models_json(const std::string& model_id, int64_t created) {
  return {{"object", "list"}, {"data", Json::array({model_json(model_id, created)})}};
}

}  // namespace eagle2::server
