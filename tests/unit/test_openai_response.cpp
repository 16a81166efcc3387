// The response shapes OpenAI's clients read: completion and chat objects, streamed chunks, SSE
// framing, errors, models; and the extensions (usage.target_forwards/tau, x_eagle2.tokens).
#include <gtest/gtest.h>

#include <string>

#include "server/openai_response.h"

namespace eagle2::server {
namespace {

ResponseHeader header(Endpoint e) {
  ResponseHeader h = make_response_header(e, "stories");
  h.created = 1700000000;
  return h;
}

const Usage kUsage{5, 7, 3, 2.5};

TEST(OpenAiResponse, IdsAreUniqueAndPrefixed) {
  const ResponseHeader a = make_response_header(Endpoint::Completions, "m");
  const ResponseHeader b = make_response_header(Endpoint::Completions, "m");
  const ResponseHeader c = make_response_header(Endpoint::Chat, "m");
  EXPECT_TRUE(a.id.starts_with("cmpl-")) << a.id;
  EXPECT_TRUE(c.id.starts_with("chatcmpl-")) << c.id;
  EXPECT_NE(a.id, b.id);
  EXPECT_GT(a.created, 1600000000);
}

TEST(OpenAiResponse, Completion) {
  const Json j = completion_json(header(Endpoint::Completions), "Once upon", "length", kUsage);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "stories");
  EXPECT_EQ(j["created"], 1700000000);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], "Once upon");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 7);
  EXPECT_EQ(j["usage"]["total_tokens"], 12);
  EXPECT_EQ(j["usage"]["target_forwards"], 3);
  EXPECT_EQ(j["usage"]["tau"], 2.5);
  EXPECT_FALSE(j["usage"].contains("drafted_by_source"));  // not a hybrid tree
}

// Hybrid trees: drafted and accepted nodes per source in the usage.
TEST(OpenAiResponse, UsageOfAHybridTreeCountsEachSource) {
  Usage u = kUsage;
  u.head_drafted = 20;
  u.head_accepted = 3;
  u.suffix_drafted = 9;
  u.suffix_accepted = 4;
  const Json j = usage_json(u);
  EXPECT_EQ(j["drafted_by_source"], (Json{{"head", 20}, {"suffix", 9}}));
  EXPECT_EQ(j["accepted_by_source"], (Json{{"head", 3}, {"suffix", 4}}));
  EXPECT_EQ(j["tau"], 2.5);
  EXPECT_FALSE(j.contains("drafted_by_depth"));  // none given
}

TEST(OpenAiResponse, UsageCountsNodesPerDepth) {
  Usage u = kUsage;
  EXPECT_FALSE(usage_json(u).contains("accepted_by_depth"));  // plain decoding: not written
  u.drafted_by_depth = {8, 5, 2};
  u.accepted_by_depth = {4, 2, 0};
  const Json j = usage_json(u);
  EXPECT_EQ(j["drafted_by_depth"], (Json{8, 5, 2}));
  EXPECT_EQ(j["accepted_by_depth"], (Json{4, 2, 0}));
  EXPECT_FALSE(j.contains("drafted_by_source"));
}

TEST(OpenAiResponse, ChatCompletion) {
  const Json j = completion_json(header(Endpoint::Chat), "Hello!", "stop", kUsage);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_TRUE(j["id"].get<std::string>().starts_with("chatcmpl-"));
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello!");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_FALSE(j["choices"][0].contains("text"));
}

TEST(OpenAiResponse, CompletionChunks) {
  const ResponseHeader h = header(Endpoint::Completions);
  const Json c =
      chunk_json(h, "ab", {{"a", true, 7, {}, "suffix"}, {"b", false, 0, {}}}, true, "", false);
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["choices"][0]["text"], "ab");
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  EXPECT_FALSE(c.contains("usage"));
  ASSERT_EQ(c["x_eagle2"]["tokens"].size(), 2u);
  EXPECT_EQ(c["x_eagle2"]["tokens"][0]["text"], "a");
  EXPECT_EQ(c["x_eagle2"]["tokens"][0]["drafted"], true);
  EXPECT_EQ(c["x_eagle2"]["tokens"][0]["id"], 7);
  EXPECT_EQ(c["x_eagle2"]["tokens"][1]["drafted"], false);
  // The source of a drafted token where known, and no field otherwise.
  EXPECT_EQ(c["x_eagle2"]["tokens"][0]["source"], "suffix");
  EXPECT_FALSE(c["x_eagle2"]["tokens"][1].contains("source"));

  const Json last = chunk_json(h, "", {}, false, "stop", true);
  EXPECT_EQ(last["choices"][0]["text"], "");
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(last.contains("usage"));
  EXPECT_TRUE(last["usage"].is_null());
  EXPECT_FALSE(last.contains("x_eagle2"));

  const Json u = usage_chunk_json(h, kUsage);
  EXPECT_TRUE(u["choices"].is_array());
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 12);
}

TEST(OpenAiResponse, ChatChunksCarryTheRoleFirstThenContent) {
  const ResponseHeader h = header(Endpoint::Chat);
  const Json first = chunk_json(h, "Hi", {{"Hi", false, 0, {}}}, true, "", false);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(first["choices"][0]["delta"]["content"], "Hi");
  const Json next = chunk_json(h, " there", {{" there", true, 0, {}}}, false, "", false);
  EXPECT_FALSE(next["choices"][0]["delta"].contains("role"));
  EXPECT_EQ(next["choices"][0]["delta"]["content"], " there");
  const Json last = chunk_json(h, "", {}, false, "length", false);
  EXPECT_TRUE(last["choices"][0]["delta"].empty());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  // A held-back chunk (tokens, no text yet) has an empty delta rather than "content": "".
  const Json held = chunk_json(h, "", {{"\n", false, 0, {}}}, false, "", false);
  EXPECT_FALSE(held["choices"][0]["delta"].contains("content"));
}

TEST(OpenAiResponse, SseFraming) {
  const std::string e = sse_event(Json{{"a", 1}});
  EXPECT_EQ(e, "data: {\"a\":1}\n\n");
  EXPECT_STREQ(kSseDone, "data: [DONE]\n\n");
}

TEST(OpenAiResponse, InvalidUtf8IsReplacedNotThrown) {
  const Json j = completion_json(header(Endpoint::Completions),
                                 "a\xff"
                                 "b",
                                 "stop", kUsage);
  std::string text;
  ASSERT_NO_THROW(text = json_text(j));
  EXPECT_NE(text.find("a\xef\xbf\xbd"
                      "b"),
            std::string::npos)
      << text;  // U+FFFD
}

TEST(OpenAiResponse, ErrorShape) {
  const Json e = error_json(400, "temperature: must be in [0, 2]", "temperature", "invalid_value");
  ASSERT_TRUE(e.contains("error"));
  EXPECT_EQ(e["error"]["message"], "temperature: must be in [0, 2]");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  EXPECT_EQ(e["error"]["param"], "temperature");
  EXPECT_EQ(e["error"]["code"], "invalid_value");
  const Json bare = error_json(413, "too large");
  EXPECT_TRUE(bare["error"]["param"].is_null());
  EXPECT_TRUE(bare["error"]["code"].is_null());
  EXPECT_EQ(error_json(401, "x")["error"]["type"], "authentication_error");
  EXPECT_EQ(error_json(404, "x")["error"]["type"], "not_found_error");
  EXPECT_EQ(error_json(503, "x")["error"]["type"], "overloaded_error");
  EXPECT_EQ(error_json(500, "x")["error"]["type"], "server_error");
}

TEST(OpenAiResponse, Models) {
  const Json list = models_json("stories", 1700000000);
  EXPECT_EQ(list["object"], "list");
  ASSERT_EQ(list["data"].size(), 1u);
  EXPECT_EQ(list["data"][0]["id"], "stories");
  EXPECT_EQ(list["data"][0]["object"], "model");
  EXPECT_EQ(list["data"][0]["owned_by"], "eagle2");
  EXPECT_EQ(list["data"][0], model_json("stories", 1700000000));
}

}  // namespace
}  // namespace eagle2::server
