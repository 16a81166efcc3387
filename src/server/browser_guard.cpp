#include "server/browser_guard.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace eagle2::server {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// The name part of a Host value: "[::1]:8080" -> "::1", "Example.com:80" -> "example.com".
// Empty when malformed (a bracket left open, a bad port).
std::string host_name(const std::string& host) {
  unsigned char address[16];
  if (inet_pton(AF_INET6, host.c_str(), address) == 1) return lower(host);  // "::1" as --host
  std::string name = host, port;
  if (host.starts_with("[")) {
    const size_t close = host.find(']');
    if (close == std::string::npos) return "";
    name = host.substr(1, close - 1);
    const std::string rest = host.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(":")) return "";
    port = rest.empty() ? "" : rest.substr(1);
  } else if (const size_t colon = host.find(':'); colon != std::string::npos) {
    name = host.substr(0, colon);
    port = host.substr(colon + 1);
  }
  if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }))
    return "";
  if (!name.empty() && name.back() == '.') name.pop_back();  // "localhost." is localhost
  return lower(name);
}

bool is_ip_literal(const std::string& name) {
  unsigned char buf[16];
  return inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

bool is_loopback(const std::string& name) {
  return name == "localhost" || name == "::1" || name.starts_with("127.");
}

}  // namespace

bool host_allowed(const std::string& host_header, bool has_host, const ServerOptions& options) {
  if (!has_host) return true;
  const std::string name = host_name(trim(host_header));
  if (name.empty()) return false;
  for (const std::string& allowed : options.allowed_hosts)
    if (allowed == "*" || host_name(allowed) == name) return true;
  const std::string bound = host_name(options.host);
  if (name == bound) return true;
  const bool wildcard = bound == "0.0.0.0" || bound == "::" || bound.empty();
  if (wildcard) return is_ip_literal(name) || name == "localhost";
  if (is_loopback(bound)) return name == "localhost" || name == "127.0.0.1" || name == "::1";
  return false;
}

bool origin_listed(const std::string& origin, const ServerOptions& options) {
  return std::find(options.allowed_origins.begin(), options.allowed_origins.end(), origin) !=
         options.allowed_origins.end();
}

bool origin_allowed(const std::string& origin, const std::string& host_header,
                    const ServerOptions& options) {
  if (!host_header.empty() && lower(origin) == "http://" + lower(trim(host_header))) return true;
  return origin_listed(origin, options);
}

bool is_json_content_type(const std::string& content_type) {
  const std::string media = lower(trim(content_type.substr(0, content_type.find(';'))));
  return media == "application/json";
}

}  // namespace eagle2::server
