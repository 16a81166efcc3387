#include "support/sse_client.h"

#include <gtest/gtest.h>

namespace eagle2::test {

SseResult post_sse(httplib::Client& client, const std::string& path, const nlohmann::json& body,
                   const httplib::Headers& headers,
                   const std::function<bool(const nlohmann::json&)>& on_event) {
  SseResult r;
  std::string pending;  // bytes after the last complete event
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = headers;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    r.status = res.status;
    r.content_type = res.get_header_value("Content-Type");
    r.retry_after = res.get_header_value("Retry-After");
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    r.raw.append(data, n);
    pending.append(data, n);
    for (size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (!event.starts_with("data: ")) {
        ADD_FAILURE() << "not an SSE data event: " << event;
        continue;
      }
      const std::string data = event.substr(6);
      if (data == "[DONE]") {
        r.done = true;
        continue;
      }
      EXPECT_FALSE(r.done) << "an event after [DONE]: " << data;
      r.events.push_back(nlohmann::json::parse(data));
      if (on_event && !on_event(r.events.back())) return false;
    }
    return true;
  };
  const httplib::Result res = client.send(req);
  if (res && r.status == 0) r.status = res->status;
  if (res && r.raw.empty()) r.raw = res->body;  // a plain (error) response, no receiver call
  return r;
}

std::string joined_text(const SseResult& r) {
  std::string text;
  for (const nlohmann::json& e : r.events) {
    if (!e.contains("choices") || e["choices"].empty()) continue;
    const nlohmann::json& c = e["choices"][0];
    if (c.contains("text")) text += c["text"].get<std::string>();
    if (c.contains("delta") && c["delta"].contains("content"))
      text += c["delta"]["content"].get<std::string>();
  }
  return text;
}

std::string finish_reason(const SseResult& r) {
  std::string reason;
  for (const nlohmann::json& e : r.events)
    if (e.contains("choices") && !e["choices"].empty() &&
        e["choices"][0]["finish_reason"].is_string())
      reason = e["choices"][0]["finish_reason"].get<std::string>();
  return reason;
}

}  // namespace eagle2::test
