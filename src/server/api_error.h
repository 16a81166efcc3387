// A request the server refuses: the HTTP status and what OpenAI's error object says
// ({"error": {"message", "type", "param", "code"}}). Thrown by the request parser and the
// handlers, caught once per route and turned into the response, so every refusal has one shape.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace eagle2::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = {}, std::string code = {})
      : std::runtime_error(message),
        status_(status),
        param_(std::move(param)),
        code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }  // the request field at fault, or ""
  const std::string& code() const { return code_; }    // OpenAI's code ("model_not_found"), or ""

 private:
  int status_;
  std::string param_, code_;
};

// `message` with every word that holds a '/' (a file path, as engine and loader errors name
// them) replaced by "(path)": a client learns nothing of the server's files from an error.
inline std::string without_paths(const std::string& message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const size_t end = std::min(message.find_first_of(" \t\n'\"", i), message.size());
    const std::string word = message.substr(i, end - i);
    out += word.find('/') == std::string::npos ? word : std::string("(path)");
    if (end < message.size()) out += message[end];
    i = end + 1;
  }
  return out;
}

}  // namespace eagle2::server
