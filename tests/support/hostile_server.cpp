#include "support/hostile_server.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2::test {
std::unique_ptr<HostileServer> start_hostile_server(size_t max_body) {
  auto x = std::make_unique<HostileServer>();
  if (shared_dir().empty()) return x;
  x->model_dir = dir_of(shared_dir() + "/" + kHostileModel);
  x->head_dir = dir_of(shared_dir() + "/" + kHostileHead);
  x->server = std::make_unique<ServeProcess>("-m " + x->model_dir + " --draft " + x->head_dir +
                                             " --max-body " + std::to_string(max_body) +
                                             " --drafter wide=dynamic:8:3:2@" + x->head_dir +
                                             " --drafter self=sps:" + x->model_dir + ":2");
  const std::string prompt = kHostilePrompt;
  const CliRun run = run_cli_split("generate -m " + x->model_dir + " -p '" + prompt + "' -n " +
                                   std::to_string(kHostileTokens));
  if (run.code == 0 && run.out.size() > prompt.size())
    x->expected = run.out.substr(prompt.size(), run.out.size() - prompt.size() - 1);
  else
    x->generate_error = "eagle2 generate: exit " + std::to_string(run.code) + ": " + run.err;
  return x;
}

httplib::Result post_json(const HostileServer& s, const std::string& path, const std::string& body,
                          const httplib::Headers& headers) {
  httplib::Client c("127.0.0.1", s.server->port());
  c.set_read_timeout(60);
  c.set_write_timeout(10);
  return c.Post(path.c_str(), headers, body, "application/json");
}

void expect_still_serving(const HostileServer& s) {
  ASSERT_TRUE(s.server->alive()) << "the server died: wait status " << s.server->exit_status();
  const nlohmann::json body = {{"prompt", kHostilePrompt}, {"max_tokens", kHostileTokens}};
  const httplib::Result r = post_json(s, "/v1/completions", body.dump());
  ASSERT_TRUE(r) << "no answer to a normal request";
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["choices"][0]["text"], s.expected);
}

std::string printable(const std::string& body) {
  std::string out;
  for (const char c : body.substr(0, 300)) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out;
}

}  // namespace eagle2::test
