#include "bench/prompt_set.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"

namespace eagle2 {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string prompt_of(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) fail(where, ": expected a JSON object");
  for (const char* key : {"turns", "prompt", "question", "text"}) {
    if (!j.contains(key)) continue;
    const auto& v = j.at(key);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array() && !v.empty() && v[0].is_string()) return v[0].get<std::string>();
    fail(where, ": field '", key, "' is not a string or a list of strings");
  }
  fail(where, ": no 'turns', 'prompt', 'question' or 'text' field");
}

}  // namespace

std::string read_maybe_gzip(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(path, ": prompt file not found");
  if (!ends_with(path, ".gz"))
    return read_regular_file(path, read_limit::kPromptSet, "a prompt file");
  // zlib reads from the descriptor the shared check opened (gzopen would block on a FIFO), and the
  // limit applies to what it inflates, which a small file can make unbounded.
  RegularFile file(path);
  gzFile f = gzdopen(file.fd(), "rb");
  if (!f) fail(path, ": cannot open");
  file.release();  // gzclose closes it now
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      fail(path, ": corrupt gzip data (", msg, ")");
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > read_limit::kPromptSet) {
      gzclose(f);
      fail_too_large(path, out.size() + static_cast<size_t>(n), read_limit::kPromptSet,
                     "a prompt file (after gunzip)");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  // gzread stops quietly at a truncated stream; gzclose reports it.
  if (gzclose(f) != Z_OK) fail(path, ": corrupt or truncated gzip data");
  return out;
}

std::vector<Prompt> load_prompt_set(const std::string& path, const PromptSetOptions& options) {
  const std::string text = read_maybe_gzip(path);
  std::string stem = std::filesystem::path(path).filename().string();
  stem = stem.substr(0, stem.find('.'));
  std::vector<std::string> items;
  const std::string plain = ends_with(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (ends_with(plain, ".jsonl") || ends_with(plain, ".json")) {
    std::istringstream in(text);
    std::string line;
    size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = path + ":" + std::to_string(line_no);
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        fail(where, ": not valid JSON");
      }
      items.push_back(prompt_of(j, where));
    }
  } else {
    // Documents separated by blank lines.
    std::istringstream in(text);
    std::string line, doc;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) {
        if (!doc.empty()) items.push_back(doc);
        doc.clear();
      } else {
        doc += (doc.empty() ? "" : "\n") + line;
      }
    }
    if (!doc.empty()) items.push_back(doc);
    if (options.opening_words > 0) {
      for (std::string& d : items) {
        std::istringstream words(d);
        std::string w, opening;
        for (size_t k = 0; k < options.opening_words && words >> w; ++k)
          opening += (k ? " " : "") + w;
        d = opening;
      }
    }
  }
  std::vector<Prompt> prompts;
  for (size_t i = 0; i < items.size(); ++i)
    prompts.push_back({stem + ":" + std::to_string(i), items[i]});
  if (options.from_end) std::reverse(prompts.begin(), prompts.end());
  if (options.limit > 0 && prompts.size() > options.limit) prompts.resize(options.limit);
  if (options.from_end) std::reverse(prompts.begin(), prompts.end());
  if (prompts.empty()) fail(path, ": no prompts found");
  return prompts;
}

}  // namespace eagle2
