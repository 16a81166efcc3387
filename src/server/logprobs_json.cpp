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

// A model may pad its vocabulary past its tokenizer's: the target can rank (and, rarely, pick) an
// id the tokenizer has no text for. It shows as an empty token, not an error that fails the
// whole response.
std::string token_bytes(const api::Tokenizer& tok, int32_t id) {
  return id >= 0 && id < tok.vocab_size() ? tok.token_bytes(id) : std::string();
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
    Json e = chat_entry(token_bytes(tok, t.id), t.logprobs.logprob);
    Json top = Json::array();
    for (const api::TokenLogprob& alt : t.logprobs.top)
      top.push_back(chat_entry(token_bytes(tok, alt.token), alt.logprob));
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
    const std::string bytes = token_bytes(tok, t.id);
    texts.push_back(text_of(bytes));
    logprobs.push_back(t.logprobs.logprob);
    // OpenAI's shape: text -> log-prob, the chosen token always among them. Two tokens with the
    // same text (byte tokens shown as U+FFFD) keep the more likely one, which comes first.
    Json top = Json::object();
    for (const api::TokenLogprob& alt : t.logprobs.top) {
      const std::string key = text_of(token_bytes(tok, alt.token)).get<std::string>();
      if (!top.contains(key)) top[key] = alt.logprob;
    }
    const std::string key = texts.back().get<std::string>();
    if (!top.contains(key)) top[key] = t.logprobs.logprob;
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    // In characters (code points), as OpenAI counts them: the text a token completes is whole
    // UTF-8 (TextStream never splits a character), so its lead bytes count its characters.
    for (const char c : t.text)
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++offset;
  }
  return {{"tokens", std::move(texts)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace eagle2::server
