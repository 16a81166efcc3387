#include "server/logprobs_json.h"

#include <string>

namespace eagle2::server {

namespace {

// A JSON string may not hold bytes that are not UTF-8: they read as U+FFFD (the token's "bytes"
// keep them).
std::string shown(const std::string& bytes) {
  return Json(bytes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Json text_of(const std::string& bytes) {
  return Json::parse(shown(bytes));
}

Json bytes_of(const std::string& bytes) {
  Json list = Json::array();
  for (const char c : bytes) list.push_back(static_cast<unsigned char>(c));
  return list;
}

Json chat_entry(const std::string& bytes, double logprob) {
  Json e;
  e["token"] = text_of(bytes);
  e["logprob"] = logprob;
  e["bytes"] = bytes_of(bytes);
  return e;
}

}  // namespace

Json chat_logprobs_json(const std::vector<TokenText>& tokens, const api::Tokenizer& tok) {
  Json content = Json::array();
  for (const TokenText& t : tokens) {
    Json e = chat_entry(tok.token_bytes(t.id), t.logprobs.logprob);
    Json top = Json::array();
    for (const api::TokenLogprob& alt : t.logprobs.top)
      top.push_back(chat_entry(tok.token_bytes(alt.token), alt.logprob));
    e["top_logprobs"] = std::move(top);
    content.push_back(std::move(e));
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

Json completion_logprobs_json(const std::vector<TokenText>& tokens, const api::Tokenizer& tok,
                              int64_t& offset) {
  Json texts = Json::array(), logprobs = Json::array(), tops = Json::array(),
       offsets = Json::array();
  for (const TokenText& t : tokens) {
    const std::string bytes = tok.token_bytes(t.id);
    texts.push_back(text_of(bytes));
    logprobs.push_back(t.logprobs.logprob);
    // OpenAI's shape: text -> log-prob, the chosen token always among them. Two tokens with the
    // same text (byte tokens shown as U+FFFD) keep the more likely one, which comes first.
    Json top = Json::object();
    for (const api::TokenLogprob& alt : t.logprobs.top) {
      const std::string key = text_of(tok.token_bytes(alt.token)).get<std::string>();
      if (!top.contains(key)) top[key] = alt.logprob;
    }
    const std::string key = texts.back().get<std::string>();
    if (!top.contains(key)) top[key] = t.logprobs.logprob;
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += static_cast<int64_t>(t.text.size());
  }
  return {{"tokens", std::move(texts)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace eagle2::server
