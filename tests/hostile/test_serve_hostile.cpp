// `eagle2 serve` against a hostile client (issue 43), over real loopback sockets to the real
// binary: requests that name files, deep JSON, huge drafter parameters, chunked and gzip bodies
// over --max-body, huge max_tokens, too many messages or stop strings, bodies on other routes,
// (the bounded fuzz of mutated valid requests: test_serve_fuzz_hostile.cpp). Each gets one 4xx
// (or the connection closed), the process never dies, and afterwards a normal request still gets
// generate's text.
// Labelled "hostile" (ctest -L hostile). Bounded in count and time; 127.0.0.1 only.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/cli.h"
#include "support/hostile_server.h"
#include "support/serve_process.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;

constexpr size_t kMaxBody = 65536;  // the server's --max-body here
constexpr int kTokens = test::kHostileTokens;
using Fixture = test::HostileServer;
using test::expect_still_serving;
using test::printable;

// One server for the whole suite (started on first use, killed at exit), with the default
// limits apart from --max-body.
Fixture* fixture() {
  // Destroyed at exit, which kills the server.
  static const std::unique_ptr<Fixture> f = test::start_hostile_server(kMaxBody);
  return f.get();
}

#define HOSTILE_SERVER(var)                                                       \
  EAGLE2_SHARED_FILE(model_cfg_, test::kHostileModel);                            \
  Fixture& var = *fixture();                                                      \
  ASSERT_TRUE(var.server&& var.server->port() > 0) << "the server did not start"; \
  ASSERT_TRUE(var.server->alive())                                                \
      << "the server died earlier: wait status " << var.server->exit_status()

httplib::Result post(const Fixture& f, const std::string& path, const std::string& body,
                     const httplib::Headers& headers = {}) {
  return test::post_json(f, path, body, headers);
}

std::string error_message(const httplib::Result& r) {
  const json body = json::parse(r->body, nullptr, false);
  if (!body.is_object() || !body.contains("error")) return "";
  return body["error"].value("message", "");
}

// 400 whose message contains `mentions`.
void expect_400(const Fixture& f, const std::string& path, const std::string& body,
                const std::string& mentions) {
  const httplib::Result r = post(f, path, body);
  ASSERT_TRUE(r) << "no answer to " << body.substr(0, 200);
  EXPECT_EQ(r->status, 400) << body.substr(0, 200) << " -> " << r->body;
  EXPECT_NE(error_message(r).find(mentions), std::string::npos)
      << body.substr(0, 200) << " -> " << r->body;
}

std::string completion_with(const std::string& field, const json& value) {
  json body = {{"prompt", test::kHostilePrompt}, {"max_tokens", kTokens}};
  body[field] = value;
  return body.dump();
}

// ---- raw sockets: bodies httplib's client would not send ----

struct RawReply {
  int status = 0;        // from the status line; 0 when none came
  std::string response;  // everything the server sent
  size_t sent = 0;       // body bytes the server took before it answered or closed
};

// Sends `head`, then pieces from `next` (until it returns "") while the server has not answered
// and takes them; reads the answer on another thread meanwhile, so that it is read even when the
// server closes the connection on a body it did not read. Bounded: `next` decides how much is
// offered, and a silent server is given up after 30 s.
RawReply raw_exchange(int port, const std::string& head, const std::function<std::string()>& next) {
  RawReply reply;
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(sock, 0);
  if (sock < 0) return reply;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{30, 0};
  setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ADD_FAILURE() << "cannot connect";
    close(sock);
    return reply;
  }
  std::atomic<bool> answered{false};
  std::thread reader([&] {
    char buf[4096];
    for (ssize_t n; (n = recv(sock, buf, sizeof buf, 0)) > 0;) {
      reply.response.append(buf, static_cast<size_t>(n));
      answered = true;
    }
    answered = true;
  });
  auto send_all = [&](const std::string& data) {
    for (size_t at = 0; at < data.size();) {
      const ssize_t n = send(sock, data.data() + at, data.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<size_t>(n);
    }
    return true;
  };
  if (send_all(head)) {
    for (std::string piece; !answered && !(piece = next()).empty();) {
      if (!send_all(piece)) break;
      reply.sent += piece.size();
    }
  }
  reader.join();
  close(sock);
  if (reply.response.starts_with("HTTP/1.1 ") && reply.response.size() >= 12)
    reply.status = std::stoi(reply.response.substr(9, 3));
  return reply;
}

// Sends `first`, waits for the server's answer (or 10 s), then sends `then` on the same
// connection and collects whatever else comes until the server closes it (or 5 s of silence).
// The number of responses in it: "HTTP/1.1 " status lines.
size_t responses_to(int port, const std::string& first, const std::string& then,
                    std::string* all = nullptr) {
  const int sock = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (sock < 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ADD_FAILURE() << "cannot connect";
    if (sock >= 0) close(sock);
    return 0;
  }
  std::string got;
  auto read_for = [&](int seconds) {
    timeval timeout{seconds, 0};
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    char buf[4096];
    const ssize_t n = recv(sock, buf, sizeof buf, 0);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
    return n > 0;
  };
  send(sock, first.data(), first.size(), MSG_NOSIGNAL);
  read_for(10);
  while (got.find("\r\n\r\n") == std::string::npos && read_for(1)) {
  }
  send(sock, then.data(), then.size(), MSG_NOSIGNAL);
  while (read_for(5)) {
  }
  close(sock);
  size_t responses = 0;
  for (size_t at = 0; (at = got.find("HTTP/1.1 ", at)) != std::string::npos; ++at) ++responses;
  if (all) *all = got;
  return responses;
}

// Pieces of a chunked body that never ends: `{"prompt": "aaaa...` in 16 KiB chunks, at most
// `limit` bytes in all (then no more pieces: the body stays unterminated).
std::function<std::string()> endless_chunks(size_t limit) {
  auto offered = std::make_shared<size_t>(0);
  return [offered, limit] {
    if (*offered >= limit) return std::string();
    std::string data = *offered == 0 ? std::string(R"({"prompt": ")") : std::string();
    data += std::string(16384 - data.size(), 'a');
    *offered += data.size();
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
  };
}

std::string request_head(const std::string& method, const std::string& path,
                         const std::string& extra_headers) {
  return method + " " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra_headers +
         "\r\n";
}

std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// ---- the tests ----

// 100,000 levels of nesting (the body is 200 KB: under a 1 MiB --max-body it used to kill the
// process, copied and dumped recursively). Here the body limit is 64 KiB, so the deep bodies
// are 30,000 levels: still far past what the stack took.
TEST(Hostile, DeepJsonIsRefusedWhileParsing) {
  HOSTILE_SERVER(f);
  const size_t levels = (kMaxBody - 64) / 2;
  const std::string deep = std::string(levels, '[') + std::string(levels, ']');
  expect_400(f, "/v1/chat/completions", R"({"messages": )" + deep + "}", "nested deeper");
  expect_400(f, "/v1/chat/completions",
             R"({"messages": [{"role": "user", "content": "hi", "x": )" + deep + "}]}",
             "nested deeper");
  expect_400(f, "/v1/completions", R"({"prompt": "x", "extra": )" + deep + "}", "nested deeper");
  std::string objects;
  for (size_t i = 0; i < levels / 3; ++i)
    objects += R"({"a")"
               ":";
  expect_400(f, "/v1/completions", objects + "1" + std::string(levels / 3, '}'), "nested deeper");
  expect_still_serving(f);
}

// The same 100,000 levels gzip-compressed (200 KB inflated, a few hundred bytes sent): over
// --max-body here, so 413; the JSON depth check is what guards a server with a larger limit.
TEST(Hostile, DeepJsonGzippedIsRefused) {
  HOSTILE_SERVER(f);
  const std::string deep =
      R"({"messages": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  const httplib::Result r =
      post(f, "/v1/chat/completions", gzip(deep), {{"Content-Encoding", "gzip"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body;
  expect_still_serving(f);
}

// A request names one of the server's drafters or a weight-free spec; any spec that names a
// folder is refused with the same message whether the folder exists or not, and the message
// repeats none of it.
TEST(Hostile, RequestsCannotNameFiles) {
  HOSTILE_SERVER(f);
  const std::vector<std::string> specs = {"sps:/etc",
                                          "sps:/abs/path/to/a/model",
                                          "sps:/no/such/folder/xyz",
                                          "sps:" + f.model_dir,
                                          "sps:" + f.model_dir + ":2",
                                          "medusa:/etc",
                                          "medusa:" + f.head_dir,
                                          "hydra:/etc:8",
                                          "chain@" + f.head_dir,
                                          "dynamic:8:3:2@/etc",
                                          "dynamic:auto@/no/such",
                                          "/etc/passwd",
                                          "../../etc",
                                          "wide@/etc"};
  std::string sps_message;
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    const httplib::Result r = post(f, "/v1/completions", completion_with("speculative", spec));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    const std::string message = error_message(r);
    EXPECT_NE(message.find("speculative"), std::string::npos) << r->body;
    for (const std::string& secret :
         {std::string("/etc"), std::string("/abs"), std::string("/no/such"), f.model_dir,
          f.head_dir, std::string("passwd"), std::string("cannot open"), std::string("No such"),
          std::string("config.json")})
      EXPECT_EQ(r->body.find(secret), std::string::npos) << r->body;
    // What may be named instead.
    EXPECT_NE(message.find("self, wide"), std::string::npos) << r->body;
    if (spec.starts_with("sps:")) {
      if (sps_message.empty()) sps_message = r->body;
      EXPECT_EQ(r->body, sps_message) << "an existing folder must look like a missing one";
    }
  }
  // The operator's drafters, by name: the same text as plain decoding.
  for (const char* name : {"wide", "self"}) {
    SCOPED_TRACE(name);
    const httplib::Result r = post(f, "/v1/completions", completion_with("speculative", name));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body)["choices"][0]["text"], f.expected);
  }
  expect_still_serving(f);
}

// chain:100000 took the server to 7 GB; dynamic trees sized from huge D * K; lookahead rows.
TEST(Hostile, HugeDrafterParametersAreRefusedBeforeTheWork) {
  HOSTILE_SERVER(f);
  const std::pair<std::string, std::string> specs[] = {
      {"chain:100000", "--max-draft-depth"},
      {"chain:2147483647", "--max-draft-depth"},
      {"lookup:1000000", "--max-draft-depth"},
      {"dynamic:60:100000:10", "--max-draft-depth"},
      {"dynamic:60:5:100000", "--max-draft-top-k"},
      {"dynamic:100000:5:10", "--max-draft-tokens"},
      {"dynamic:auto:100000:1", "--max-draft-depth"},
      {"dynamic:auto:8:2147483647:cal", "--max-draft-top-k"},
      {"lookahead:100:2:100", "--max-draft-tokens"},
      {"lookahead:1:40:0", "--max-draft-depth"},
      {"static:[[999]]", "--max-draft-top-k"},
  };
  for (const auto& [spec, flag] : specs) {
    SCOPED_TRACE(spec);
    expect_400(f, "/v1/completions", completion_with("speculative", spec), flag);
  }
  expect_400(f, "/v1/completions", completion_with("speculative", std::string(20000, '9')),
             "longer than");
  expect_still_serving(f);
}

TEST(Hostile, HugeMaxTokensManyMessagesAndStopStrings) {
  HOSTILE_SERVER(f);
  // stories260K's context is 512, the default cap.
  for (const json& n :
       {json(int64_t{1} << 30), json(513), json(18446744073709551615ull), json(1e300)})
    expect_400(f, "/v1/completions", completion_with("max_tokens", n), "max_tokens");
  json messages = json::array();
  for (int i = 0; i < 4097; ++i) messages.push_back({{"role", "u"}});  // 53 KB: under --max-body
  expect_400(f, "/v1/chat/completions", json{{"messages", messages}}.dump(),
             "at most 4096 messages");
  expect_400(f, "/v1/completions", completion_with("stop", json::array({"a", "b", "c", "d", "e"})),
             "at most 4");
  expect_400(f, "/v1/completions", completion_with("stop", std::string(2000, 's')),
             "at most 1024 bytes");
  json keys = {{"prompt", test::kHostilePrompt}};
  for (int i = 0; i < 300; ++i) keys["k" + std::to_string(i)] = i;
  expect_400(f, "/v1/completions", keys.dump(), "more than 256 keys");
  expect_still_serving(f);
}

// Fields that would change what the answer means get a 400 naming them, not a silent answer
// to another question.
TEST(Hostile, MeaningChangingFieldsAreRefused) {
  HOSTILE_SERVER(f);
  expect_400(f, "/v1/completions", completion_with("tools", json::array({{{"type", "function"}}})),
             "tools");
  expect_400(f, "/v1/completions", completion_with("tool_choice", "required"), "tool_choice");
  expect_400(f, "/v1/completions", completion_with("functions", json::array({{{"name", "f"}}})),
             "functions");
  expect_400(f, "/v1/completions", completion_with("response_format", {{"type", "json_object"}}),
             "response_format");
  expect_400(f, "/v1/completions", completion_with("stream_options", {{"include_usage", true}}),
             "stream_options");
  expect_still_serving(f);
}

// A chunked body has no Content-Length for httplib to check: the server counts what it reads
// and answers 413 at --max-body, without waiting for (or holding) the rest. The bomb offered
// here is 32 MiB and never ends.
TEST(Hostile, ChunkedBodyOverTheLimitIsCutOff) {
  HOSTILE_SERVER(f);
  const size_t offered = size_t{32} << 20;
  const RawReply r = raw_exchange(
      f.server->port(), request_head("POST", "/v1/completions", "Transfer-Encoding: chunked\r\n"),
      endless_chunks(offered));
  EXPECT_EQ(r.status, 413) << r.response.substr(0, 300);
  EXPECT_NE(r.response.find("--max-body"), std::string::npos) << r.response.substr(0, 300);
  EXPECT_LT(r.sent, offered) << "the server read the whole bomb";
  expect_still_serving(f);
}

// A refused body that was not read to its end closes the connection: otherwise the server
// would read the rest of it as the next request (request smuggling past a proxy). Here the rest
// is a request, GET /v1/models, sent once the refusal came, which must get no answer: neither
// after a chunked body cut off at --max-body nor after a body on a route that takes none.
TEST(Hostile, NoRequestIsReadFromTheRestOfARefusedBody) {
  HOSTILE_SERVER(f);
  const std::string smuggled = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  const std::string data = R"({"prompt": ")" + std::string(kMaxBody + 100, 'a');
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size() + 2 + smuggled.size());
  std::string got;
  EXPECT_EQ(responses_to(f.server->port(),
                         request_head("POST", "/v1/completions", "Transfer-Encoding: chunked\r\n") +
                             size + data,
                         "\r\n" + smuggled, &got),
            1u)
      << printable(got);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 413")) << printable(got);
  EXPECT_EQ(got.find("\"object\":\"list\""), std::string::npos) << printable(got);

  EXPECT_EQ(
      responses_to(f.server->port(),
                   request_head("POST", "/v1/no-such-route",
                                "Content-Length: " + std::to_string(smuggled.size()) + "\r\n"),
                   smuggled, &got),
      1u)
      << printable(got);
  EXPECT_TRUE(got.starts_with("HTTP/1.1 404")) << printable(got);
  EXPECT_EQ(got.find("\"object\":\"list\""), std::string::npos) << printable(got);
  expect_still_serving(f);
}

// A gzip body is checked against Content-Length as sent; inflated, it is counted again. 16 MiB
// of JSON compresses to about 16 KiB: 413, sent whole or chunked; a small gzip body still works.
TEST(Hostile, GzipAndDeflateBombsOverTheLimit) {
  HOSTILE_SERVER(f);
  const std::string big = R"({"prompt": ")" + std::string(size_t{16} << 20, 'a') + "\"}";
  const std::string bomb = gzip(big);
  ASSERT_LT(bomb.size(), kMaxBody);
  for (const char* encoding : {"gzip", "deflate"}) {
    SCOPED_TRACE(encoding);
    const httplib::Result r = post(f, "/v1/completions", bomb, {{"Content-Encoding", encoding}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413) << r->body;
  }
  // Chunked and gzipped: counted after inflating, as it arrives.
  size_t at = 0;
  const RawReply r =
      raw_exchange(f.server->port(),
                   request_head("POST", "/v1/completions",
                                "Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n"),
                   [&]() -> std::string {
                     if (at > bomb.size()) return "";
                     if (at == bomb.size()) {
                       at++;
                       return "0\r\n\r\n";
                     }
                     const std::string piece = bomb.substr(at, 4096);
                     at += piece.size();
                     char size[32];
                     std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
                     return size + piece + "\r\n";
                   });
  EXPECT_EQ(r.status, 413) << r.response.substr(0, 300);
  // Under the limit, a compressed request is served.
  const json ok = {{"prompt", test::kHostilePrompt}, {"max_tokens", kTokens}};
  const httplib::Result small =
      post(f, "/v1/completions", gzip(ok.dump()), {{"Content-Encoding", "gzip"}});
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  expect_still_serving(f);
}

// httplib reads the body of a POST, PUT, PATCH or DELETE to any route into memory before it
// routes it: outside the completion routes such a request is answered before its body is read.
TEST(Hostile, BodiesOnOtherRoutesAreNotRead) {
  HOSTILE_SERVER(f);
  const size_t offered = size_t{32} << 20;
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE"}) {
    SCOPED_TRACE(method);
    const RawReply r =
        raw_exchange(f.server->port(),
                     request_head(method, "/v1/no-such-route", "Transfer-Encoding: chunked\r\n"),
                     endless_chunks(offered));
    EXPECT_EQ(r.status, 404) << r.response.substr(0, 300);
    EXPECT_LT(r.sent, offered) << "the server read the whole bomb";
  }
  expect_still_serving(f);
}

// Mutations of valid requests (fixed seed, bounded count and time): bytes flipped, inserted,
// deleted, truncated; deep or long splices, bad UTF-8, huge numbers. Every one gets an HTTP
// answer or a closed connection, never a dead server.
}  // namespace
}  // namespace eagle2
