#include "server/load_client.h"

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

namespace eagle2::server {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The text of one answer object: choices[0].text (completions), .message.content (chat) or
// .delta.content (chat chunks); the finish reason when present.
void read_choice(const Json& j, LoadResult& r) {
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return;
  const Json& c = j["choices"][0];
  if (c.contains("text") && c["text"].is_string()) r.text += c["text"].get<std::string>();
  for (const char* key : {"message", "delta"})
    if (c.contains(key) && c[key].is_object() && c[key].contains("content") &&
        c[key]["content"].is_string())
      r.text += c[key]["content"].get<std::string>();
  if (c.contains("finish_reason") && c["finish_reason"].is_string())
    r.finish_reason = c["finish_reason"].get<std::string>();
}

void read_usage(const Json& j, LoadResult& r) {
  if (!j.contains("usage") || !j["usage"].is_object()) return;
  const Json& u = j["usage"];
  auto number = [&](const char* key, auto& out) {
    if (u.contains(key) && u[key].is_number()) out = u[key].get<std::decay_t<decltype(out)>>();
  };
  number("prompt_tokens", r.prompt_tokens);
  number("completion_tokens", r.completion_tokens);
  number("target_forwards", r.target_forwards);
  number("tau", r.tau);
}

}  // namespace

LoadResult send_request(const std::string& host, int port, const LoadRequest& request,
                        int timeout_seconds) {
  LoadResult r;
  httplib::Client client(host, port);
  client.set_read_timeout(timeout_seconds, 0);
  client.set_write_timeout(timeout_seconds, 0);
  client.set_connection_timeout(10, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = request.path;
  req.body = request.body;
  req.headers.emplace("Content-Type", "application/json");
  if (!request.api_key.empty()) req.headers.emplace("Authorization", "Bearer " + request.api_key);
  const auto t0 = Clock::now();
  std::string pending;  // streaming: bytes not yet split into events
  bool parse_failed = false;
  if (request.stream) {
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      pending.append(data, n);
      for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
        const std::string event = pending.substr(0, end);
        pending.erase(0, end + 2);
        if (event.rfind("data: ", 0) != 0) continue;
        const std::string payload = event.substr(6);
        if (payload == "[DONE]") {
          r.done_marker = true;
          continue;
        }
        Json j;
        try {
          j = Json::parse(payload);
        } catch (const std::exception& e) {
          r.error = std::string("a chunk is not JSON: ") + e.what();
          parse_failed = true;
          return false;
        }
        const size_t before = r.text.size();
        read_choice(j, r);
        read_usage(j, r);
        if (j.contains("x_eagle2") && j["x_eagle2"].contains("tokens"))
          for (const Json& t : j["x_eagle2"]["tokens"]) {
            ++r.streamed_tokens;
            if (t.value("drafted", false)) ++r.drafted_tokens;
          }
        if (r.text.size() > before && r.first_token_seconds < 0) r.first_token_seconds = since(t0);
        ++r.chunks;
        if (request.hang_up_after_chunks >= 0 && r.chunks >= request.hang_up_after_chunks) {
          r.hung_up = true;
          return false;  // httplib closes the connection
        }
        if (request.chunk_delay_ms > 0)
          std::this_thread::sleep_for(std::chrono::milliseconds(request.chunk_delay_ms));
      }
      return true;
    };
  }
  const httplib::Result res = client.send(req);
  r.seconds = since(t0);
  if (res) {
    r.status = res->status;
    if (!request.stream || res->status != 200) r.body = res->body;
  } else if (!r.hung_up && !parse_failed) {
    r.error = "no response: " + httplib::to_string(res.error());
  }
  if (!request.stream && res && res->status == 200) {
    try {
      const Json j = Json::parse(res->body);
      read_choice(j, r);
      read_usage(j, r);
    } catch (const std::exception& e) {
      r.error = std::string("the response is not JSON: ") + e.what();
    }
  }
  return r;
}

std::pair<int, std::string> http_get(const std::string& host, int port, const std::string& path) {
  httplib::Client client(host, port);
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(60, 0);
  const httplib::Result res = client.Get(path);
  if (!res) return {0, ""};
  return {res->status, res->body};
}

double metric_value(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ", lines = "\n" + text;
  const size_t at = lines.find(key);
  if (at == std::string::npos) return -1;
  try {
    return std::stod(lines.substr(at + key.size()));
  } catch (...) {
    return -1;
  }
}

}  // namespace eagle2::server
