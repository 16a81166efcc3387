// The Host, Origin and Content-Type rules of `eagle2 serve` (src/server/browser_guard.h) for the
// binds the hostile suite does not start: a wildcard address, a specific one, IPv6, a name. The
// suite (tests/hostile/test_serve_browser_hostile.cpp) checks the loopback bind over sockets.
#include <gtest/gtest.h>

#include <string>

#include "server/browser_guard.h"

namespace eagle2::server {
namespace {

ServerOptions bound_to(const std::string& host) {
  ServerOptions o;
  o.host = host;
  return o;
}

TEST(BrowserGuard, LoopbackBindServesOnlyLoopbackNames) {
  const ServerOptions o = bound_to("127.0.0.1");
  for (const char* ok : {"127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "localhost.",
                         "[::1]", "[::1]:8080"})
    EXPECT_TRUE(host_allowed(ok, true, o)) << ok;
  for (const char* bad : {"evil.example", "localhost.evil.example", "127.0.0.1.evil.example",
                          "10.0.0.1", "192.168.1.2:8080", "[::1", "[::1]x", "localhost:80x", ""})
    EXPECT_FALSE(host_allowed(bad, true, o)) << bad;
  EXPECT_TRUE(host_allowed("", false, o));  // no Host at all: HTTP/1.0, never a browser
}

TEST(BrowserGuard, WildcardBindServesAddressesButNamesOnlyWhenListed) {
  for (const char* any : {"0.0.0.0", "::"}) {
    ServerOptions o = bound_to(any);
    for (const char* ok : {"192.168.1.2:8080", "10.0.0.1", "[fe80::1]:8080", "localhost"})
      EXPECT_TRUE(host_allowed(ok, true, o)) << any << " " << ok;
    EXPECT_FALSE(host_allowed("llm.lan:8080", true, o)) << any;
    EXPECT_FALSE(host_allowed("evil.example", true, o)) << any;
    o.allowed_hosts = {"LLM.lan"};
    EXPECT_TRUE(host_allowed("llm.lan:8080", true, o)) << any;
    EXPECT_FALSE(host_allowed("evil.example", true, o)) << any;
    o.allowed_hosts = {"*"};
    EXPECT_TRUE(host_allowed("evil.example", true, o)) << any;
  }
}

TEST(BrowserGuard, SpecificBindServesItsOwnAddressOnly) {
  const ServerOptions v4 = bound_to("192.168.1.2");
  EXPECT_TRUE(host_allowed("192.168.1.2:8080", true, v4));
  EXPECT_FALSE(host_allowed("192.168.1.3", true, v4));
  EXPECT_FALSE(host_allowed("localhost", true, v4));
  const ServerOptions v6 = bound_to("::1");
  EXPECT_TRUE(host_allowed("[::1]:8080", true, v6));
  EXPECT_TRUE(host_allowed("localhost", true, v6));
  EXPECT_FALSE(host_allowed("[::2]", true, v6));
  const ServerOptions name = bound_to("myhost.lan");
  EXPECT_TRUE(host_allowed("MyHost.lan:8080", true, name));
  EXPECT_FALSE(host_allowed("other.lan", true, name));
}

TEST(BrowserGuard, OriginIsThePagesOwnOrListed) {
  ServerOptions o;
  EXPECT_TRUE(origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", o));
  EXPECT_FALSE(origin_allowed("http://127.0.0.1:8081", "127.0.0.1:8080", o));
  EXPECT_FALSE(origin_allowed("null", "127.0.0.1:8080", o));
  EXPECT_FALSE(origin_allowed("http://", "", o));
  o.allowed_origins = {"https://app.example"};
  EXPECT_TRUE(origin_allowed("https://app.example", "127.0.0.1:8080", o));
  EXPECT_TRUE(origin_listed("https://app.example", o));
  EXPECT_FALSE(origin_listed("http://127.0.0.1:8080", o));
  EXPECT_FALSE(origin_allowed("https://app.example.evil", "127.0.0.1:8080", o));
}

TEST(BrowserGuard, ContentTypeMustBeJson) {
  for (const char* ok : {"application/json", "Application/JSON", "application/json; charset=utf-8",
                         " application/json ;charset=UTF-8"})
    EXPECT_TRUE(is_json_content_type(ok)) << ok;
  for (const char* bad :
       {"", "text/plain", "text/plain; charset=application/json", "application/jsonp",
        "application/x-www-form-urlencoded", "multipart/form-data; boundary=application/json"})
    EXPECT_FALSE(is_json_content_type(bad)) << bad;
}

}  // namespace
}  // namespace eagle2::server
