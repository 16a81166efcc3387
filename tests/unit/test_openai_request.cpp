// Request bodies of /v1/completions and /v1/chat/completions: what is accepted, the defaults, and
// every refusal (400 naming the field, 404 for another model).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "eagle2/error.h"
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

// The neutral values of the fields that would change an answer's meaning are accepted.
TEST(OpenAiRequest, NeutralToolAndFormatFields) {
  EXPECT_NO_THROW(completion(R"({"prompt": "x", "tools": [], "functions": [], "tool_choice":
      "none", "function_call": "none", "response_format": {"type": "text"}})"));
  EXPECT_NO_THROW(completion(R"({"prompt": "x", "tools": null, "response_format": null,
      "stream_options": null})"));
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
                .find("a request cannot name a head folder"),
            std::string::npos);
}

CompletionRequest with_policy(const std::string& body, const RequestPolicy& policy) {
  return parse_completion_request(body, Endpoint::Completions, "stories", policy);
}

ApiError policy_refusal(const std::string& body, const RequestPolicy& policy) {
  try {
    with_policy(body, policy);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return ApiError(0, "");
}

std::string spec_body(const std::string& spec) {
  return R"({"prompt": "x", "speculative": )" + nlohmann::json(spec).dump() + "}";
}

// Drafters with weights are the operator's: a request names them by --drafter NAME, and any spec
// that names a folder is refused on its text alone, with a message that does not repeat it (the
// same whether the folder exists or not). These parse without a model: a refusal here happens
// before anything could touch the disk.
TEST(OpenAiRequest, RequestsNameTheServersDraftersNeverAFolder) {
  RequestPolicy policy;
  policy.drafters["draft7"] = api::parse_drafter_spec("sps:/models/draft:3");
  policy.drafters["wide"] = api::parse_drafter_spec("dynamic:8:6:2@/models/head");
  const CompletionRequest r = with_policy(spec_body("draft7"), policy);
  ASSERT_TRUE(r.speculative.has_value());
  EXPECT_EQ(r.speculative->kind, "sps");
  EXPECT_EQ(r.speculative->folder, "/models/draft");
  EXPECT_EQ(with_policy(spec_body("wide"), policy).speculative->head, "/models/head");
  for (const std::string spec :
       {"sps:/etc", "sps:/etc/passwd-no-such:4:2", "sps:/models/draft:3", "medusa:/tmp/x",
        "hydra:/abs/path:8", "chain@/etc", "dynamic:auto@/models/head", "/etc/passwd", "../secret",
        "Draft7", "draft7 "}) {
    SCOPED_TRACE(spec);
    const ApiError e = policy_refusal(spec_body(spec), policy);
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "speculative");
    const std::string message = e.what();
    EXPECT_NE(message.find("draft7, wide"), std::string::npos) << message;  // what it may name
    for (const char* secret : {"/etc", "/tmp", "/abs", "/models", "secret", "Draft7", "passwd"})
      EXPECT_EQ(message.find(secret), std::string::npos) << message;
  }
  // Without --drafter the answer says so.
  const ApiError e = policy_refusal(spec_body("sps:/etc"), RequestPolicy{});
  EXPECT_NE(std::string(e.what()).find("offers none"), std::string::npos) << e.what();
}

TEST(OpenAiRequest, DrafterNamesCannotBeKinds) {
  EXPECT_NO_THROW(check_drafter_name("draft-7_b.v2"));
  for (const char* name : {"", "chain", "sps", "dynamic", "sampled", "lookahead", "suffix", "a:b",
                           "a@b", "a/b", "a b"})
    EXPECT_THROW(check_drafter_name(name), Error) << name;
  EXPECT_THROW(check_drafter_name(std::string(65, 'a')), Error);
}

// Every drafter size a request controls is bounded before the drafter is made: chain:100000
// (O(N^2) tree choices) and dynamic trees with huge D or K never reach the engine.
TEST(OpenAiRequest, DrafterSizesWithinTheServersLimits) {
  RequestPolicy policy;
  policy.draft = {20, 6, 4};  // tokens, depth, top-k
  for (const char* spec :
       {"chain:6", "lookup:6", "dynamic:20:6:4", "static:[[0],[1],[0,0],[3]]", "lookahead:2:3:2",
        "plain", "none", "static:20", "suffix:20:6:0", "dynamic:20:6:4+suffix:20:6:0",
        "dynamic:20:6:4+suffix:4:2", "sampled:20:6:4"})
    EXPECT_NO_THROW(with_policy(spec_body(spec), policy)) << spec;
  const std::pair<const char*, const char*> over[] = {
      {"chain:100000", "--max-draft-depth"},
      {"chain:2147483647", "--max-draft-depth"},
      {"lookup:7", "--max-draft-depth"},
      {"dynamic:21:6:4", "--max-draft-tokens"},
      {"dynamic:20:7:4", "--max-draft-depth"},
      {"dynamic:20:6:5", "--max-draft-top-k"},
      {"dynamic:60:2147483647:2147483647", "--max-draft-depth"},
      {"dynamic:auto:6:100000", "--max-draft-top-k"},
      {"dynamic:auto:6:4", "--max-draft-tokens"},  // its trees grow to 64 tokens
      {"static", "--max-draft-tokens"},            // EAGLE-1's 64 tokens
      {"static:[[0],[0,0],[0,0,0],[0,0,0,0],[0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0,0]]",
       "--max-draft-depth"},
      {"static:[[4]]", "--max-draft-top-k"},
      {"lookahead:5:3:6", "--max-draft-tokens"},  // (5 + 6) * 2 = 22 rows
      {"lookahead:2:8:0", "--max-draft-depth"},
      {"suffix", "--max-draft-depth"},  // D = 7
      {"suffix:21:6", "--max-draft-tokens"},
      {"suffix:20:7", "--max-draft-depth"},
      {"sampled:21:6:4", "--max-draft-tokens"},
      {"sampled:20:7:4", "--max-draft-depth"},
      {"sampled:20:6:5", "--max-draft-top-k"},
      {"sampled:2147483647:2147483647:2147483647", "--max-draft-depth"},
      // A hybrid's suffix part is bounded as the suffix drafter alone.
      {"dynamic:20:6:4+suffix:21:6", "--max-draft-tokens"},
      {"dynamic:20:6:4+suffix:20:7", "--max-draft-depth"},
      {"dynamic:20:6:4+suffix", "--max-draft-depth"},
  };
  for (const auto& [spec, flag] : over) {
    SCOPED_TRACE(spec);
    const ApiError e = policy_refusal(spec_body(spec), policy);
    EXPECT_EQ(e.status(), 400);
    EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
  }
  // A malformed weight-free spec is one 400 naming the grammar.
  for (const char* spec : {"suffix:1:2:3:4", "suffix:99999999999", "suffix:4:-1",
                           "suffix:", "dynamic+suffix:", "dynamic+lookup", "chain:3+suffix"}) {
    const ApiError e = policy_refusal(spec_body(spec), policy);
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "speculative");
    EXPECT_NE(std::string(e.what()).find(spec), std::string::npos) << e.what();
  }
  // The default limits hold the server's documented defaults and the specs the docs show.
  for (const char* spec : {"dynamic", "dynamic:60:5:10", "dynamic:auto:8:1:cal", "chain:6",
                           "static", "lookahead:15:5:15", "lookup", "suffix", "suffix:64:31:5",
                           "sampled", "dynamic:8:6:2+suffix"})
    EXPECT_NO_THROW(with_policy(spec_body(spec), RequestPolicy{})) << spec;
  EXPECT_THROW(with_policy(spec_body(std::string(kMaxSpecLength + 1, '1')), RequestPolicy{}),
               ApiError);
}

TEST(OpenAiRequest, MaxTokensCappedByTheServer) {
  RequestPolicy policy;
  policy.max_tokens = 512;
  EXPECT_EQ(*with_policy(R"({"prompt": "x", "max_tokens": 512})", policy).max_tokens, 512);
  for (const char* body :
       {R"({"prompt": "x", "max_tokens": 513})", R"({"prompt": "x", "max_tokens": 1073741824})",
        R"({"prompt": "x", "max_tokens": 18446744073709551615})"}) {
    const ApiError e = policy_refusal(body, policy);
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_NE(std::string(e.what()).find("[1, 512]"), std::string::npos) << e.what();
  }
  const ApiError e = [&] {
    try {
      parse_completion_request(R"({"messages": [{"role": "user", "content": "x"}],
                                   "max_completion_tokens": 600})",
                               Endpoint::Chat, "stories", policy);
    } catch (const ApiError& err) {
      return err;
    }
    return ApiError(0, "");
  }();
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(e.param(), "max_completion_tokens");
}

std::string nested(size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

// Deep JSON is refused while it is parsed (the parser stops at level 65), before any recursive
// copy or dump; so are objects with too many keys, too many messages, long stop strings.
TEST(OpenAiRequest, BodyShapeIsBoundedWhileParsing) {
  // 63 levels inside the body object: 64 in all, accepted as far as the shape goes.
  EXPECT_NO_THROW(completion(R"({"prompt": "x", "extra": )" + nested(63) + "}"));
  for (const size_t levels : {64, 100000}) {
    for (const Endpoint endpoint : {Endpoint::Completions, Endpoint::Chat}) {
      const std::string field = endpoint == Endpoint::Chat ? "messages" : "prompt";
      const ApiError e = refusal(R"({")" + field + R"(": )" + nested(levels) + "}", endpoint);
      EXPECT_EQ(e.status(), 400);
      EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos)
          << e.what();
    }
  }
  // Deep objects too, and a deep value inside an otherwise valid message.
  std::string deep_objects;
  for (int i = 0; i < 100000; ++i) deep_objects += R"({"a":)";
  deep_objects += "1" + std::string(100000, '}');
  EXPECT_NE(std::string(refusal(deep_objects, Endpoint::Chat).what()).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(std::string(refusal(R"({"messages": [{"role": "user", "content": "x", "n": )" +
                                    nested(70) + "}]}",
                                Endpoint::Chat)
                            .what())
                .find("nested deeper"),
            std::string::npos);

  std::string many_keys = R"({"prompt": "x")";
  for (size_t i = 0; i < kMaxObjectMembers; ++i) many_keys += ",\"k" + std::to_string(i) + "\":0";
  EXPECT_NE(std::string(refusal(many_keys + "}").what()).find("more than 256 keys"),
            std::string::npos);

  std::string messages = R"({"messages": [)";
  for (size_t i = 0; i <= kMaxMessages; ++i)
    messages += std::string(i ? "," : "") + R"({"role": "user", "content": "x"})";
  expect_400(messages + "]}", "at most 4096 messages", Endpoint::Chat);
  EXPECT_NO_THROW(chat(R"({"messages": [{"role": "user", "content": "x"}]})"));

  expect_400(R"({"prompt": "x", "stop": ")" + std::string(kMaxStopLength + 1, 'a') + "\"}",
             "at most 1024 bytes");
  EXPECT_NO_THROW(
      completion(R"({"prompt": "x", "stop": ")" + std::string(kMaxStopLength, 'a') + "\"}"));
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
      {R"("max_tokens": "16")", "max_tokens"},
      {R"("max_tokens": 16.5)", "max_tokens"},
      {R"("max_tokens": 0)", "max_tokens"},
      {R"("max_tokens": -3)", "max_tokens"},
      {R"("max_tokens": 99999999999)", "max_tokens"},
      {R"("temperature": "hot")", "temperature"},
      {R"("temperature": -0.1)", "temperature"},
      {R"("temperature": 2.5)", "temperature"},
      {R"("top_p": 0)", "top_p"},
      {R"("top_p": 1.1)", "top_p"},
      {R"("top_p": true)", "top_p"},
      {R"("top_k": -1)", "top_k"},
      {R"("top_k": 1.5)", "top_k"},
      {R"("top_k": 3000000000)", "top_k"},
      {R"("seed": -1)", "seed"},
      {R"("seed": 1.5)", "seed"},
      {R"("seed": "7")", "seed"},
      {R"("seed": 18446744073709551616)", "seed"},
      {R"("stop": 5)", "stop"},
      {R"("stop": "")", "stop"},
      {R"("stop": ["a", ""])", "stop"},
      {R"("stop": ["a", 1])", "stop[1]"},
      {R"("stop": ["a", "b", "c", "d", "e"])", "stop"},
      {R"("n": 2)", "n"},
      {R"("n": "1")", "n"},
      {R"("best_of": 3)", "best_of"},
      {R"("echo": true)", "echo"},
      {R"("stream": "yes")", "stream"},
      {R"("stream": 1)", "stream"},
      {R"("stream_options": true)", "stream_options"},
      {R"("stream_options": {"include_usage": true})", "only allowed with"},
      {R"("stream": false, "stream_options": {})", "stream_options"},
      {R"("tools": [{"type": "function", "function": {"name": "f"}}])", "tools"},
      {R"("tools": {})", "tools"},
      {R"("functions": [{"name": "f"}])", "functions"},
      {R"("tool_choice": "auto")", "tool_choice"},
      {R"("tool_choice": {"type": "function"})", "tool_choice"},
      {R"("function_call": "auto")", "function_call"},
      {R"("response_format": {"type": "json_object"})", "response_format"},
      {R"("response_format": {"type": "json_schema", "json_schema": {}})", "response_format"},
      {R"("response_format": "text")", "response_format"},
      {R"("stream_options": {"include_usage": "yes"})", "stream_options.include_usage"},
      {R"("presence_penalty": 0.5)", "presence_penalty"},
      {R"("frequency_penalty": "0")", "frequency_penalty"},
      {R"("logprobs": 21)", "logprobs"},
      {R"("logprobs": -1)", "logprobs"},
      {R"("logprobs": true)", "logprobs"},
      {R"("logprobs": 2.5)", "logprobs"},
      {R"("top_logprobs": 2)", "top_logprobs"},
      {R"("logit_bias": {"50": 1})", "logit_bias"},
      {R"("suffix": "end")", "suffix"},
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

// logprobs as OpenAI spells it per endpoint: chat a boolean plus top_logprobs (0..20, only with
// logprobs true), completions an integer (0..20 here; OpenAI stops at 5).
TEST(OpenAiRequest, Logprobs) {
  EXPECT_EQ(completion(R"({"prompt": "x"})").logprobs, -1);
  EXPECT_EQ(completion(R"({"prompt": "x", "logprobs": null})").logprobs, -1);
  EXPECT_EQ(completion(R"({"prompt": "x", "logprobs": false})").logprobs, -1);
  EXPECT_EQ(completion(R"({"prompt": "x", "logprobs": 0})").logprobs, 0);
  EXPECT_EQ(completion(R"({"prompt": "x", "logprobs": 20})").logprobs, 20);
  const std::string m = R"({"messages": [{"role": "user", "content": "x"}], )";
  EXPECT_EQ(chat(m + R"("logprobs": false})").logprobs, -1);
  EXPECT_EQ(chat(m + R"("logprobs": true})").logprobs, 0);
  EXPECT_EQ(chat(m + R"("logprobs": true, "top_logprobs": 20})").logprobs, 20);
  EXPECT_EQ(chat(m + R"("logprobs": true, "top_logprobs": 3})").logprobs, 3);
  expect_400(m + R"("logprobs": true, "top_logprobs": 21})", "top_logprobs", Endpoint::Chat);
  expect_400(m + R"("logprobs": true, "top_logprobs": -1})", "top_logprobs", Endpoint::Chat);
  expect_400(m + R"("top_logprobs": 2})", "top_logprobs", Endpoint::Chat);
  expect_400(m + R"("logprobs": false, "top_logprobs": 2})", "top_logprobs", Endpoint::Chat);
  expect_400(m + R"("logprobs": 3})", "logprobs", Endpoint::Chat);
}

}  // namespace
}  // namespace eagle2::server
