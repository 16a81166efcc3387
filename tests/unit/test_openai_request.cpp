// Request bodies of /v1/completions and /v1/chat/completions: what is accepted, the defaults, and
// every refusal (400 naming the field, 404 for another model).
#include <gtest/gtest.h>

#include <string>

#include "server/api_error.h"
#include "server/openai_request.h"

namespace eagle2::server {
namespace {

CompletionRequest completion(const std::string& body) {
  return parse_completion_request(body, Endpoint::Completions, "stories");
}
CompletionRequest chat(const std::string& body) {
  return parse_completion_request(body, Endpoint::Chat, "stories");
}

// The ApiError a body gets; fails the test when the body is accepted.
ApiError refusal(const std::string& body, Endpoint endpoint = Endpoint::Completions) {
  try {
    parse_completion_request(body, endpoint, "stories");
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "");
}

// 400 whose message names `field`.
void expect_400(const std::string& body, const std::string& field,
                Endpoint endpoint = Endpoint::Completions) {
  const ApiError e = refusal(body, endpoint);
  EXPECT_EQ(e.status(), 400) << body;
  EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
      << body << " -> " << e.what() << " (should name " << field << ")";
}

TEST(OpenAiRequest, CompletionDefaults) {
  const CompletionRequest r = completion(R"({"prompt": "Once upon"})");
  EXPECT_EQ(r.endpoint, Endpoint::Completions);
  EXPECT_EQ(r.prompt, "Once upon");
  EXPECT_FALSE(r.prompt_is_ids);
  EXPECT_FALSE(r.max_tokens.has_value());  // the server applies 16 (kDefaultCompletionTokens)
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_EQ(r.sampling.seed, 0u);
  EXPECT_TRUE(r.stop.empty());
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_FALSE(r.speculative.has_value());
}

TEST(OpenAiRequest, CompletionWithEveryField) {
  const CompletionRequest r = completion(R"({
    "model": "stories", "prompt": ["Once"], "max_tokens": 32, "temperature": 0.7,
    "top_p": 0.9, "top_k": 40, "seed": 18446744073709551615, "stop": ["\n", "END"], "n": 1,
    "stream": true, "stream_options": {"include_usage": true}, "speculative": "chain:6",
    "user": "u1", "presence_penalty": 0, "frequency_penalty": 0.0, "logprobs": null,
    "logit_bias": {}, "best_of": 1, "echo": false, "suffix": null, "unknown_field": [1, 2]})");
  EXPECT_EQ(r.prompt, "Once");
  EXPECT_EQ(*r.max_tokens, 32);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.7f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_EQ(r.sampling.seed, 18446744073709551615ull);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  ASSERT_TRUE(r.speculative.has_value());
  EXPECT_EQ(r.speculative->kind, "chain");
  EXPECT_EQ(r.speculative->chain_depth, 6);
}

TEST(OpenAiRequest, NullMeansAbsent) {
  const CompletionRequest r = completion(
      R"({"prompt": "x", "max_tokens": null, "temperature": null, "stop": null, "seed": null,
          "stream": null, "model": null, "speculative": null})");
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_FALSE(r.speculative.has_value());
}

TEST(OpenAiRequest, PromptAsTokenIds) {
  const CompletionRequest r = completion(R"({"prompt": [1, 400, 23]})");
  EXPECT_TRUE(r.prompt_is_ids);
  EXPECT_EQ(r.prompt_ids, (std::vector<int32_t>{1, 400, 23}));
  expect_400(R"({"prompt": [1, -2]})", "prompt[1]");
  expect_400(R"({"prompt": [1, 2.5]})", "prompt[1]");
  expect_400(R"({"prompt": [1, 3000000000]})", "prompt[1]");
  expect_400(R"({"prompt": [[1, 2], [3]]})", "prompt");
}

TEST(OpenAiRequest, SpeculativeSpecs) {
  for (const char* spec : {"plain", "none", "lookup", "chain:6", "dynamic:auto:8:1:cal",
                           "dynamic:60:5:10", "static"}) {
    const CompletionRequest r =
        completion(std::string(R"({"prompt": "x", "speculative": ")") + spec + "\"}");
    ASSERT_TRUE(r.speculative.has_value()) << spec;
  }
  expect_400(R"({"prompt": "x", "speculative": "dynamic:zero"})", "speculative");
  expect_400(R"({"prompt": "x", "speculative": "fast"})", "speculative");
  expect_400(R"({"prompt": "x", "speculative": 6})", "speculative");
  // A request must not make the server load a folder of its choosing.
  expect_400(R"({"prompt": "x", "speculative": "dynamic:8:6:2@/etc"})", "speculative");
  EXPECT_NE(std::string(refusal(R"({"prompt": "x", "speculative": "chain@../h"})").what())
                .find("a head folder ('@../h') cannot be named in a request"),
            std::string::npos);
}

TEST(OpenAiRequest, ModelIdOrDefaultElse404) {
  EXPECT_NO_THROW(completion(R"({"prompt": "x", "model": "default"})"));
  EXPECT_NO_THROW(completion(R"({"prompt": "x", "model": "stories"})"));
  const ApiError e = refusal(R"({"prompt": "x", "model": "gpt-4"})");
  EXPECT_EQ(e.status(), 404);
  EXPECT_EQ(e.param(), "model");
  EXPECT_EQ(e.code(), "model_not_found");
  expect_400(R"({"prompt": "x", "model": 3})", "model");
}

TEST(OpenAiRequest, MalformedJsonAndNonObjects) {
  for (const char* body : {"", "{", "{\"prompt\": \"x\",}", "nul", "{\"prompt\": \"\xff\"}"}) {
    const ApiError e = refusal(body);
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos) << e.what();
  }
  for (const char* body : {"[]", "\"prompt\"", "42", "null"}) {
    const ApiError e = refusal(body);
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_NE(std::string(e.what()).find("JSON object"), std::string::npos) << e.what();
  }
}

TEST(OpenAiRequest, PromptRefusals) {
  expect_400(R"({})", "prompt");
  expect_400(R"({"prompt": null})", "prompt");
  expect_400(R"({"prompt": ""})", "prompt");
  expect_400(R"({"prompt": 5})", "prompt");
  expect_400(R"({"prompt": {"text": "x"}})", "prompt");
  expect_400(R"({"prompt": []})", "prompt");
  expect_400(R"({"prompt": ["a", "b"]})", "prompt");
}

TEST(OpenAiRequest, WrongTypesAndRanges) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("max_tokens": "16")", "max_tokens"},   {R"("max_tokens": 16.5)", "max_tokens"},
      {R"("max_tokens": 0)", "max_tokens"},      {R"("max_tokens": -3)", "max_tokens"},
      {R"("max_tokens": 99999999999)", "max_tokens"},
      {R"("temperature": "hot")", "temperature"}, {R"("temperature": -0.1)", "temperature"},
      {R"("temperature": 2.5)", "temperature"},  {R"("top_p": 0)", "top_p"},
      {R"("top_p": 1.1)", "top_p"},              {R"("top_p": true)", "top_p"},
      {R"("top_k": -1)", "top_k"},               {R"("top_k": 1.5)", "top_k"},
      {R"("top_k": 3000000000)", "top_k"},       {R"("seed": -1)", "seed"},
      {R"("seed": 1.5)", "seed"},                {R"("seed": "7")", "seed"},
      {R"("seed": 18446744073709551616)", "seed"},
      {R"("stop": 5)", "stop"},                  {R"("stop": "")", "stop"},
      {R"("stop": ["a", ""])", "stop"},          {R"("stop": ["a", 1])", "stop[1]"},
      {R"("stop": ["a", "b", "c", "d", "e"])", "stop"},
      {R"("n": 2)", "n"},                        {R"("n": "1")", "n"},
      {R"("best_of": 3)", "best_of"},            {R"("echo": true)", "echo"},
      {R"("stream": "yes")", "stream"},          {R"("stream": 1)", "stream"},
      {R"("stream_options": true)", "stream_options"},
      {R"("stream_options": {"include_usage": "yes"})", "stream_options.include_usage"},
      {R"("presence_penalty": 0.5)", "presence_penalty"},
      {R"("frequency_penalty": "0")", "frequency_penalty"},
      {R"("logprobs": 5)", "logprobs"},          {R"("logprobs": true)", "logprobs"},
      {R"("logit_bias": {"50": 1})", "logit_bias"}, {R"("suffix": "end")", "suffix"},
      {R"("user": 7)", "user"},
  };
  for (const auto& [field, name] : cases) {
    const std::string body = std::string(R"({"prompt": "x", )") + field + "}";
    SCOPED_TRACE(body);
    const ApiError e = refusal(body);
    EXPECT_EQ(e.status(), 400);
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(OpenAiRequest, ChatMessages) {
  const CompletionRequest r = chat(
      R"({"messages": [{"role": "system", "content": "Be brief."},
                       {"role": "user", "content": [{"type": "text", "text": "Hi "},
                                                    {"type": "text", "text": "there"}]},
                       {"role": "assistant", "content": null, "name": "bot"}],
          "max_completion_tokens": 9})");
  EXPECT_EQ(r.endpoint, Endpoint::Chat);
  // Key order kept, content parts joined.
  EXPECT_EQ(r.messages_json,
            R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi there"},)"
            R"({"role":"assistant","content":null,"name":"bot"}])");
  EXPECT_EQ(*r.max_tokens, 9);
  EXPECT_FALSE(chat(R"({"messages": [{"role": "user", "content": "x"}]})").max_tokens);
}

TEST(OpenAiRequest, ChatRefusals) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "messages"},
      {R"({"messages": "hi"})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": ["hi"]})", "messages[0]"},
      {R"({"messages": [{"content": "hi"}]})", "messages[0].role"},
      {R"({"messages": [{"role": 1, "content": "hi"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "", "content": "hi"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
       "messages[0].content[0].text"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 0})",
       "max_completion_tokens"},
  };
  for (const auto& [body, name] : cases) expect_400(body, name, Endpoint::Chat);
}

TEST(OpenAiRequest, ErrorsNameTheParam) {
  const ApiError e = refusal(R"({"prompt": "x", "temperature": 9})");
  EXPECT_EQ(e.param(), "temperature");
  EXPECT_NE(std::string(e.what()).find("[0, 2]"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace eagle2::server
