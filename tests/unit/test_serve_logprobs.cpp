// `logprobs` on both endpoints of eagle2 serve (in-process, stories260K): the numbers are the
// target's log-softmax at temperature 1 along the generated path, equal to what `eagle2 logprobs`
// prints for the same token path, and the same with and without speculation (they come from the
// verified target logits, so losslessness holds for them too); OpenAI's shapes, streamed and not;
// the bounds (400 beyond 20 alternatives).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "eagle2/tokenizer.h"
#include "server/http_server.h"
#include "server/logprobs_json.h"
#include "support/cli.h"
#include "support/running_server.h"
#include "support/shared_data.h"
#include "support/sse_client.h"

namespace eagle2 {
namespace {

using nlohmann::json;

constexpr const char* kLogprobsModel = "data/models/stories260K-hf/config.json";
constexpr const char* kLogprobsHead = "data/models/stories260K-eagle-head/config.json";
constexpr const char* kTemplate = "data/chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja";
// `eagle2 logprobs` prints %.17g of the same doubles: equal up to the last bit; the tolerance is
// for the text round trip only.
constexpr double kTolerance = 1e-12;

#define EAGLE2_STORIES_SERVER(var)               \
  EAGLE2_SHARED_FILE(model_cfg, kLogprobsModel); \
  EAGLE2_SHARED_FILE(head_cfg, kLogprobsHead);   \
  EAGLE2_SHARED_FILE(chat_template, kTemplate);  \
  server::ServerOptions options;                 \
  options.model_dir = test::dir_of(model_cfg);   \
  options.head_dir = test::dir_of(head_cfg);     \
  options.chat_template = chat_template;         \
  options.port = 0;                              \
  options.threads = 1;                           \
  test::RunningServer var(options)

json post(httplib::Client& c, const std::string& path, const json& body, int* status) {
  const httplib::Result r = c.Post(path.c_str(), body.dump(), "application/json");
  if (!r) {
    ADD_FAILURE() << "no response from " << path;
    return {};
  }
  *status = r->status;
  return json::parse(r->body);
}

// `eagle2 logprobs --tokens PATH --top N`: one row per position.
std::vector<json> cli_logprobs(const std::string& model_dir, const std::vector<int32_t>& path,
                               int top) {
  std::string ids;
  for (const int32_t t : path) ids += (ids.empty() ? "" : ",") + std::to_string(t);
  const test::CliRun run = test::run_cli_split("logprobs -m '" + model_dir + "' --tokens " + ids +
                                               " --top " + std::to_string(top));
  EXPECT_EQ(run.code, 0) << run.err;
  std::vector<json> rows;
  std::istringstream in(run.out);
  for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
  EXPECT_EQ(rows.size(), path.size());
  return rows;
}

// Unicode code points of UTF-8 text: OpenAI's text_offset counts characters.
size_t characters(const std::string& utf8) {
  size_t n = 0;
  for (const char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::vector<double> values_of(const json& top_object) {
  std::vector<double> v;
  for (const auto& [text, logprob] : top_object.items()) v.push_back(logprob.get<double>());
  std::sort(v.rbegin(), v.rend());
  return v;
}

// The completions logprobs of `generated` (ids after `prompt`) against `eagle2 logprobs` on the
// same path: each token's log-prob, and the alternatives' log-probs (the object is keyed by text,
// so compared as sorted values; the chosen token is always among them).
void expect_cli_equal(const std::string& model_dir, const std::vector<int32_t>& prompt,
                      const std::vector<int32_t>& generated, const json& logprobs, int top) {
  std::vector<int32_t> path = prompt;
  path.insert(path.end(), generated.begin(), generated.end());
  const std::vector<json> rows = cli_logprobs(model_dir, path, top);
  ASSERT_EQ(rows.size(), path.size());
  ASSERT_EQ(logprobs["token_logprobs"].size(), generated.size()) << logprobs;
  for (size_t i = 0; i < generated.size(); ++i) {
    SCOPED_TRACE("token " + std::to_string(i));
    const json& row = rows[prompt.size() - 1 + i];
    ASSERT_EQ(row["next"].get<int32_t>(), generated[i]);
    EXPECT_NEAR(logprobs["token_logprobs"][i].get<double>(), row["next_logprob"].get<double>(),
                kTolerance);
    std::vector<double> want;
    bool chosen_listed = false;
    for (const json& t : row["top"]) {
      want.push_back(t[1].get<double>());
      chosen_listed |= t[0].get<int32_t>() == generated[i];
    }
    if (!chosen_listed) want.push_back(row["next_logprob"].get<double>());
    const std::vector<double> got = values_of(logprobs["top_logprobs"][i]);
    ASSERT_EQ(got.size(), want.size()) << logprobs["top_logprobs"][i];
    for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], want[k], kTolerance);
  }
}

TEST(ServeLogprobs, CompletionsEqualEagle2LogprobsWithAndWithoutSpeculation) {
  EAGLE2_STORIES_SERVER(srv);
  httplib::Client c = srv.client();
  const api::Tokenizer tok = api::Tokenizer::open(options.model_dir);
  const std::vector<int32_t> prompt = tok.encode("Once upon a time", tok.adds_bos());
  json first;
  for (const char* spec : {"plain", "chain:3", "dynamic:16:3:4", "lookup", ""}) {
    SCOPED_TRACE(spec);
    json body = {{"prompt", prompt}, {"max_tokens", 24}, {"logprobs", 5}};
    if (*spec) body["speculative"] = spec;
    int status = 0;
    const json r = post(c, "/v1/completions", body, &status);
    ASSERT_EQ(status, 200) << r;
    const json& lp = r["choices"][0]["logprobs"];
    ASSERT_TRUE(lp.is_object()) << r;
    ASSERT_EQ(lp["tokens"].size(), 24u);
    if (first.is_null()) {
      first = lp;
    } else {
      // Bit for bit: the verified rows of a drafted tree are the plain decoding rows.
      EXPECT_EQ(lp, first);
    }
    // text_offset: where each token starts in the text; the token texts spell the text.
    const std::string text = r["choices"][0]["text"];
    std::string spelled;
    for (size_t i = 0; i < lp["tokens"].size(); ++i) {
      EXPECT_EQ(lp["text_offset"][i].get<size_t>(), characters(spelled));
      spelled += lp["tokens"][i].get<std::string>();
    }
    EXPECT_EQ(spelled, text);
  }
  // Several at once, sharing the batch (continuous batching puts them in one target forward):
  // each still gets exactly the numbers of a request alone.
  std::vector<std::thread> clients;
  std::vector<json> together(6);
  for (size_t i = 0; i < together.size(); ++i)
    clients.emplace_back([&, i] {
      httplib::Client own = srv.client();
      const char* specs[] = {"plain", "dynamic:16:3:4", "chain:3"};
      int st = 0;
      together[i] = post(
          own, "/v1/completions",
          {{"prompt", prompt}, {"max_tokens", 24}, {"logprobs", 5}, {"speculative", specs[i % 3]}},
          &st);
    });
  for (std::thread& t : clients) t.join();
  for (const json& r : together) EXPECT_EQ(r["choices"][0]["logprobs"], first);
  // The path the server took, as ids: the greedy one, which `eagle2 logprobs --greedy` also takes.
  const test::CliRun greedy = test::run_cli_split("logprobs -m '" + options.model_dir +
                                                  "' -p 'Once upon a time' --greedy 24 --top 1");
  ASSERT_EQ(greedy.code, 0) << greedy.err;
  std::vector<int32_t> generated;
  std::istringstream in(greedy.out);
  for (std::string line; std::getline(in, line);) {
    const json row = json::parse(line);
    if (row["position"].get<size_t>() >= prompt.size()) generated.push_back(row["token"]);
  }
  expect_cli_equal(options.model_dir, prompt, generated, first, 5);
}

// Sampling: the log-probs are of the model's distribution (temperature 1, before top-k/top-p),
// not of the tempered one the token was drawn from, as OpenAI reports them. Streamed: each chunk
// carries its tokens' entries; joined they are the whole answer's.
TEST(ServeLogprobs, StreamedSampledCompletionIsTheModelsDistribution) {
  EAGLE2_STORIES_SERVER(srv);
  httplib::Client c = srv.client();
  const api::Tokenizer tok = api::Tokenizer::open(options.model_dir);
  const std::vector<int32_t> prompt = tok.encode("Lily and Tom", tok.adds_bos());
  const test::SseResult s = test::post_sse(c, "/v1/completions",
                                           {{"prompt", prompt},
                                            {"max_tokens", 30},
                                            {"temperature", 1.3},
                                            {"top_k", 20},
                                            {"seed", 7},
                                            {"logprobs", 3},
                                            {"stream", true},
                                            {"speculative", "dynamic:16:3:4"}});
  ASSERT_EQ(s.status, 200);
  ASSERT_TRUE(s.done) << s.raw;
  std::vector<int32_t> generated;
  json joined = {{"tokens", json::array()},
                 {"token_logprobs", json::array()},
                 {"top_logprobs", json::array()},
                 {"text_offset", json::array()}};
  std::string text;
  std::vector<std::string> token_texts;  // x_eagle2's: they add up to the text
  for (const json& e : s.events) {
    if (!e.contains("x_eagle2")) {
      EXPECT_TRUE(e["choices"].empty() || e["choices"][0]["logprobs"].is_null()) << e;
      continue;
    }
    const json& lp = e["choices"][0]["logprobs"];
    ASSERT_EQ(lp["tokens"].size(), e["x_eagle2"]["tokens"].size()) << e;
    for (const json& t : e["x_eagle2"]["tokens"]) {
      generated.push_back(t["id"]);
      token_texts.push_back(t["text"]);
    }
    for (const char* k : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
      for (const json& v : lp[k]) joined[k].push_back(v);
    text += e["choices"][0]["text"].get<std::string>();
  }
  ASSERT_EQ(generated.size(), 30u);
  // text_offset runs on across chunks: where each token's text starts in the whole answer.
  size_t offset = 0;
  for (size_t i = 0; i < token_texts.size(); ++i) {
    EXPECT_EQ(joined["text_offset"][i].get<size_t>(), offset) << i;
    offset += characters(token_texts[i]);
  }
  EXPECT_EQ(offset, characters(text));
  expect_cli_equal(options.model_dir, prompt, generated, joined, 3);
}

TEST(ServeLogprobs, ChatContentWithTopLogprobsSameWithAndWithoutSpeculation) {
  EAGLE2_STORIES_SERVER(srv);
  httplib::Client c = srv.client();
  const json messages = {{{"role", "user"}, {"content", "Tell me a story."}}};
  json first;
  for (const char* spec : {"plain", "dynamic:16:3:4"}) {
    SCOPED_TRACE(spec);
    int status = 0;
    const json r = post(c, "/v1/chat/completions",
                        {{"messages", messages},
                         {"max_tokens", 16},
                         {"logprobs", true},
                         {"top_logprobs", 4},
                         {"speculative", spec}},
                        &status);
    ASSERT_EQ(status, 200) << r;
    const json& lp = r["choices"][0]["logprobs"];
    ASSERT_TRUE(lp.contains("content")) << r;
    ASSERT_EQ(lp["content"].size(), r["usage"]["completion_tokens"].get<size_t>());
    for (const json& t : lp["content"]) {
      ASSERT_EQ(t["top_logprobs"].size(), 4u) << t;
      EXPECT_LE(t["logprob"].get<double>(), 0.0);
      // Greedy: the chosen token is the most likely one.
      EXPECT_EQ(t["logprob"], t["top_logprobs"][0]["logprob"]) << t;
      EXPECT_EQ(t["token"], t["top_logprobs"][0]["token"]) << t;
      std::string bytes;
      for (const json& b : t["bytes"]) bytes += static_cast<char>(b.get<int>());
      EXPECT_EQ(bytes, t["token"].get<std::string>());  // stories260K's tokens are whole UTF-8
      for (size_t k = 1; k < t["top_logprobs"].size(); ++k)
        EXPECT_GE(t["top_logprobs"][k - 1]["logprob"].get<double>(),
                  t["top_logprobs"][k]["logprob"].get<double>());
    }
    if (first.is_null())
      first = lp;
    else
      EXPECT_EQ(lp, first);
  }
  // Streamed: the chunks' entries joined are the whole answer's; without logprobs, null.
  const test::SseResult s = test::post_sse(c, "/v1/chat/completions",
                                           {{"messages", messages},
                                            {"max_tokens", 16},
                                            {"logprobs", true},
                                            {"top_logprobs", 4},
                                            {"stream", true}});
  ASSERT_TRUE(s.done) << s.raw;
  json content = json::array();
  for (const json& e : s.events)
    if (e.contains("x_eagle2"))
      for (const json& t : e["choices"][0]["logprobs"]["content"]) content.push_back(t);
  EXPECT_EQ(content, first["content"]);
  int status = 0;
  const json plain =
      post(c, "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 4}}, &status);
  EXPECT_TRUE(plain["choices"][0]["logprobs"].is_null()) << plain;
}

TEST(ServeLogprobs, AlternativesAreBounded) {
  EAGLE2_STORIES_SERVER(srv);
  httplib::Client c = srv.client();
  const json messages = {{{"role", "user"}, {"content", "Hi"}}};
  int status = 0;
  json r = post(c, "/v1/chat/completions",
                {{"messages", messages}, {"logprobs", true}, {"top_logprobs", 21}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["param"], "top_logprobs") << r;
  r = post(c, "/v1/chat/completions", {{"messages", messages}, {"top_logprobs", 2}}, &status);
  EXPECT_EQ(status, 400);
  r = post(c, "/v1/completions", {{"prompt", "Hi"}, {"logprobs", 21}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["param"], "logprobs") << r;
  r = post(c, "/v1/completions", {{"prompt", "Hi"}, {"logprobs", 20}, {"max_tokens", 2}}, &status);
  EXPECT_EQ(status, 200) << r;
  r = post(c, "/v1/chat/completions",
           {{"messages", messages}, {"logprobs", true}, {"top_logprobs", 20}, {"max_tokens", 2}},
           &status);
  ASSERT_EQ(status, 200) << r;
  EXPECT_EQ(r["choices"][0]["logprobs"]["content"][0]["top_logprobs"].size(), 20u);
}

// The JSON helpers alone: text_offset counts characters, not bytes; an id past the tokenizer's
// vocabulary (a model may pad its vocabulary) shows as an empty token instead of failing.
TEST(ServeLogprobs, OffsetsCountCharactersAndIdsPastTheTokenizerAreEmpty) {
  EAGLE2_SHARED_FILE(model_cfg, kLogprobsModel);
  const api::Tokenizer tok = api::Tokenizer::open(test::dir_of(model_cfg));
  const int32_t past = tok.vocab_size() + 3;
  const int32_t a = tok.encode("a", false).back();
  std::vector<server::TokenText> tokens = {
      {"caf\xC3\xA9", false, a, {-0.5, {{a, -0.5}, {past, -1.5}}}},
      {"!", true, past, {-2.0, {{a, -0.25}}}},
  };
  int64_t offset = 10;
  const json c = server::completion_logprobs_json(tokens, tok, offset);
  EXPECT_EQ(c["text_offset"], json::parse("[10, 14]")) << c;  // "café" is 4 characters, 5 bytes
  EXPECT_EQ(offset, 15);
  EXPECT_EQ(c["tokens"][1], "");
  EXPECT_EQ(c["token_logprobs"][1], -2.0);
  EXPECT_EQ(c["top_logprobs"][0][""], -1.5) << c;
  const json chat = server::chat_logprobs_json(tokens, tok);
  EXPECT_EQ(chat["content"][1]["token"], "");
  EXPECT_TRUE(chat["content"][1]["bytes"].empty());
  EXPECT_EQ(chat["content"][0]["top_logprobs"][1]["token"], "");
}

}  // namespace
}  // namespace eagle2
