#include "server/openai_request.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "eagle2/error.h"
#include "server/api_error.h"

namespace eagle2::server {

namespace {

// ordered_json: the messages keep their key order when dumped for the chat template.
using Json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& field, const std::string& message) {
  throw ApiError(400, field + ": " + message, field, "invalid_value");
}

// The field's value, or nullptr when absent or null (OpenAI treats an explicit null as absent).
const Json* field(const Json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string type_name(const Json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

double number_in(const Json& v, const std::string& name, double lo, double hi, bool lo_open) {
  if (!v.is_number()) bad(name, "must be a number, got " + type_name(v));
  const double x = v.get<double>();
  if (!std::isfinite(x) || (lo_open ? x <= lo : x < lo) || x > hi) {
    char range[64];
    std::snprintf(range, sizeof range, "%s%g, %g]", lo_open ? "(" : "[", lo, hi);
    bad(name, "must be in " + std::string(range) + ", got " + v.dump());
  }
  return x;
}

int64_t integer_in(const Json& v, const std::string& name, int64_t lo, int64_t hi) {
  if (!v.is_number_integer())  // true for both signed and unsigned JSON integers
    bad(name, "must be an integer, got " + (v.is_number() ? v.dump() : type_name(v)));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    bad(name,
        "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    bad(name,
        "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return x;
}

bool boolean(const Json& v, const std::string& name) {
  if (!v.is_boolean()) bad(name, "must be a boolean, got " + type_name(v));
  return v.get<bool>();
}

const std::string& string(const Json& v, const std::string& name) {
  if (!v.is_string()) bad(name, "must be a string, got " + type_name(v));
  return v.get_ref<const std::string&>();
}

// Fields OpenAI defines that this server accepts only at their neutral value.
void only_neutral(const Json& body) {
  if (const Json* v = field(body, "n"); v && integer_in(*v, "n", 1, 128) != 1)
    bad("n", "only n = 1 is supported");
  if (const Json* v = field(body, "best_of"); v && integer_in(*v, "best_of", 1, 128) != 1)
    bad("best_of", "only best_of = 1 is supported");
  if (const Json* v = field(body, "echo"); v && boolean(*v, "echo"))
    bad("echo", "echo is not supported");
  for (const char* name : {"presence_penalty", "frequency_penalty"})
    if (const Json* v = field(body, name); v && number_in(*v, name, -2, 2, false) != 0)
      bad(name, "only 0 is supported");
  if (const Json* v = field(body, "logit_bias")) {
    if (!v->is_object()) bad("logit_bias", "must be an object, got " + type_name(*v));
    if (!v->empty()) bad("logit_bias", "logit_bias is not supported");
  }
  if (const Json* v = field(body, "suffix")) {
    if (!v->is_string() || !v->get_ref<const std::string&>().empty())
      bad("suffix", "suffix is not supported");
  }
  if (const Json* v = field(body, "user")) string(*v, "user");
}

// Fields that would change what the answer means (tool calls, a JSON schema): ignoring them
// would hand the client an answer it did not ask for, so they are refused, naming the field.
// Their neutral values (no tools, no tool choice, plain text) are accepted.
void no_meaning_changes(const Json& body) {
  for (const char* name : {"tools", "functions"})
    if (const Json* v = field(body, name); v && !(v->is_array() && v->empty()))
      bad(name, "tool and function calls are not supported");
  for (const char* name : {"tool_choice", "function_call"})
    if (const Json* v = field(body, name); v && !(v->is_string() && *v == "none"))
      bad(name, "tool and function calls are not supported (only \"none\")");
  if (const Json* v = field(body, "response_format")) {
    const Json* type = v->is_object() ? field(*v, "type") : nullptr;
    if (!type || !type->is_string() || *type != "text")
      bad("response_format", "only {\"type\": \"text\"} is supported (no JSON mode or schema)");
  }
}

// Chat: "logprobs": true, with "top_logprobs" alternatives (0..20, OpenAI's range) only then.
// Completions: "logprobs": N alternatives per token (0..kMaxLogprobs; OpenAI allows 5); false
// reads as absent, as this server has always accepted it.
void read_logprobs(const Json& body, CompletionRequest& r) {
  const Json* v = field(body, "logprobs");
  const Json* top = field(body, "top_logprobs");
  if (r.endpoint == Endpoint::Chat) {
    const bool on = v && boolean(*v, "logprobs");
    if (top) {
      const auto n = static_cast<int32_t>(integer_in(*top, "top_logprobs", 0, kMaxLogprobs));
      if (!on) bad("top_logprobs", "needs \"logprobs\": true");
      r.logprobs = n;
    } else if (on) {
      r.logprobs = 0;
    }
    return;
  }
  if (top) bad("top_logprobs", "is a chat field: /v1/completions takes \"logprobs\": N");
  if (!v || (v->is_boolean() && !v->get<bool>())) return;
  r.logprobs = static_cast<int32_t>(integer_in(*v, "logprobs", 0, kMaxLogprobs));
}

void read_prompt(const Json& body, CompletionRequest& r) {
  const Json* p = field(body, "prompt");
  if (!p) bad("prompt", "is required");
  if (p->is_string()) {
    r.prompt = p->get<std::string>();
  } else if (p->is_array() && p->size() == 1 && (*p)[0].is_string()) {
    r.prompt = (*p)[0].get<std::string>();  // a list of one prompt, as clients batch them
  } else if (p->is_array() && !p->empty() && (*p)[0].is_number()) {
    r.prompt_is_ids = true;
    for (size_t i = 0; i < p->size(); ++i)
      r.prompt_ids.push_back(static_cast<int32_t>(integer_in(
          (*p)[i], "prompt[" + std::to_string(i) + "]", 0, std::numeric_limits<int32_t>::max())));
  } else if (p->is_array() && p->size() > 1) {
    bad("prompt", "only one prompt per request is supported");
  } else {
    bad("prompt", "must be a string or an array of token ids, got " +
                      (p->is_array() ? std::string("an empty array") : type_name(*p)));
  }
  if (!r.prompt_is_ids && r.prompt.empty()) bad("prompt", "is empty");
}

// OpenAI's content parts ([{"type": "text", "text": ...}]) joined into the one string chat
// templates expect; anything but text (images, audio) is refused.
std::string content_text(const Json& parts, const std::string& name) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string where = name + "[" + std::to_string(i) + "]";
    const Json& part = parts[i];
    if (!part.is_object()) bad(where, "must be an object, got " + type_name(part));
    const Json* type = field(part, "type");
    if (!type || !type->is_string() || type->get_ref<const std::string&>() != "text")
      bad(where + ".type", "only \"text\" content parts are supported");
    const Json* t = field(part, "text");
    if (!t) bad(where + ".text", "is required");
    text += string(*t, where + ".text");
  }
  return text;
}

void read_messages(const Json& body, CompletionRequest& r) {
  const Json* m = field(body, "messages");
  if (!m) bad("messages", "is required");
  if (!m->is_array()) bad("messages", "must be an array, got " + type_name(*m));
  if (m->empty()) bad("messages", "is empty");
  if (m->size() > kMaxMessages)
    bad("messages",
        "at most " + std::to_string(kMaxMessages) + " messages, got " + std::to_string(m->size()));
  Json messages = Json::array();
  for (size_t i = 0; i < m->size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    Json msg = (*m)[i];
    if (!msg.is_object()) bad(where, "must be an object, got " + type_name(msg));
    const Json* role = field(msg, "role");
    if (!role) bad(where + ".role", "is required");
    if (string(*role, where + ".role").empty()) bad(where + ".role", "is empty");
    const auto content = msg.find("content");
    if (content != msg.end() && content->is_array())
      *content = content_text(*content, where + ".content");
    else if (content != msg.end() && !content->is_string() && !content->is_null())
      bad(where + ".content",
          "must be a string, an array of text parts or null, got " + type_name(*content));
    messages.push_back(std::move(msg));
  }
  r.messages_json = messages.dump();
}

void read_stop(const Json& body, CompletionRequest& r) {
  const Json* s = field(body, "stop");
  if (!s) return;
  if (s->is_string()) {
    r.stop.push_back(s->get<std::string>());
  } else if (s->is_array()) {
    if (s->size() > 4) bad("stop", "at most 4 stop strings, got " + std::to_string(s->size()));
    for (size_t i = 0; i < s->size(); ++i)
      r.stop.push_back(string((*s)[i], "stop[" + std::to_string(i) + "]"));
  } else {
    bad("stop", "must be a string or an array of strings, got " + type_name(*s));
  }
  for (const std::string& x : r.stop) {
    if (x.empty()) bad("stop", "stop strings must not be empty");
    if (x.size() > kMaxStopLength)
      bad("stop", "stop strings are at most " + std::to_string(kMaxStopLength) + " bytes, got " +
                      std::to_string(x.size()));
  }
}

// The body parsed with its shape bounded while it is read: nesting past kMaxJsonDepth or an
// object with more than kMaxObjectMembers keys stops the parser at once. Deep values would
// otherwise be copied and dumped recursively further on (a stack overflow at 100,000 levels),
// and ordered_json's objects find a key by a linear search (quadratic in the keys of one object).
Json parse_bounded(const std::string& text) {
  std::vector<size_t> keys;  // per open array or object: keys seen so far
  const Json::parser_callback_t bound = [&keys](int depth, Json::parse_event_t event, Json&) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        // `depth` counts the arrays and objects around this one: the top level is 0.
        if (depth >= kMaxJsonDepth)
          throw ApiError(
              400,
              "malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", "",
              "invalid_json");
        keys.push_back(0);
        break;
      case Json::parse_event_t::key:
        if (!keys.empty() && ++keys.back() > kMaxObjectMembers)
          throw ApiError(400,
                         "malformed JSON: an object with more than " +
                             std::to_string(kMaxObjectMembers) + " keys",
                         "", "invalid_json");
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case Json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return Json::parse(text, bound);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(400, std::string("malformed JSON: ") + e.what(), "", "invalid_json");
  }
}

}  // namespace

CompletionRequest parse_completion_request(const std::string& body_text, Endpoint endpoint,
                                           const std::string& model_id,
                                           const RequestPolicy& policy) {
  const Json body = parse_bounded(body_text);
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");

  if (const Json* m = field(body, "model")) {
    const std::string& model = string(*m, "model");
    if (model != model_id && model != "default")
      throw ApiError(404,
                     "the model '" + model + "' does not exist (this server has '" + model_id +
                         "', also called 'default')",
                     "model", "model_not_found");
  }

  CompletionRequest r;
  r.endpoint = endpoint;
  if (endpoint == Endpoint::Completions)
    read_prompt(body, r);
  else
    read_messages(body, r);
  only_neutral(body);
  no_meaning_changes(body);
  read_logprobs(body, r);

  // Above the server's cap: refused, not clamped, so that the client knows its answer would be
  // cut short (--max-tokens; by default the context, past which no answer can run anyway).
  if (const Json* v = field(body, "max_tokens"))
    r.max_tokens = integer_in(*v, "max_tokens", 1, policy.max_tokens);
  if (endpoint == Endpoint::Chat)
    if (const Json* v = field(body, "max_completion_tokens"))
      r.max_tokens = integer_in(*v, "max_completion_tokens", 1, policy.max_tokens);
  if (const Json* v = field(body, "temperature"))
    r.sampling.temperature = static_cast<float>(number_in(*v, "temperature", 0, 2, false));
  if (const Json* v = field(body, "top_p"))
    r.sampling.top_p = static_cast<float>(number_in(*v, "top_p", 0, 1, true));
  if (const Json* v = field(body, "top_k"))
    r.sampling.top_k =
        static_cast<int32_t>(integer_in(*v, "top_k", 0, std::numeric_limits<int32_t>::max()));
  if (const Json* v = field(body, "seed")) {
    // nlohmann reads every non-negative integer as unsigned, so 2^63 .. 2^64 - 1 are seeds too.
    if (!v->is_number_integer())
      bad("seed", "must be an integer, got " + (v->is_number() ? v->dump() : type_name(*v)));
    if (!v->is_number_unsigned()) bad("seed", "must be in [0, 2^64 - 1], got " + v->dump());
    r.sampling.seed = v->get<uint64_t>();
  }
  read_stop(body, r);
  if (const Json* v = field(body, "stream")) r.stream = boolean(*v, "stream");
  if (const Json* v = field(body, "stream_options")) {
    if (!v->is_object()) bad("stream_options", "must be an object, got " + type_name(*v));
    if (const Json* u = field(*v, "include_usage"))
      r.include_usage = boolean(*u, "stream_options.include_usage");
    if (!r.stream) bad("stream_options", "is only allowed with \"stream\": true");
  }
  // A request must not make the server read a folder of its choosing (request_policy.h).
  if (const Json* v = field(body, "speculative"))
    r.speculative = request_drafter(string(*v, "speculative"), policy);
  return r;
}

}  // namespace eagle2::server
