// The folder layering of src/ (docs/ARCHITECTURE.md): every quoted include of a file in src/ names
// a file of its own folder or of a lower layer, never a peer or a layer above. Checked on the
// source text, so an upward include fails here before it can grow into a dependency cycle.
// And the public API's boundary: the tools include only include/eagle2/, their own folder's
// headers and the server's front door, and the public headers include only each other and the
// standard library. (The build enforces the first too: tools compile with include/ and the
// server's headers alone on their path.) The server (src/server/) sits above the public API and
// includes nothing else of src/: it serves what any user of the library could build.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/shared_data.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

// Lower numbers are lower layers; a folder may include from layers strictly below its own.
const std::map<std::string, int> kLayer = {
    {"core", 0},           {"report", 0},   {"kernels", 1},  {"io", 1},
    {"tokenizer", 1},      {"sampling", 1}, {"chat", 1},     {"model", 2},
    {"tokenizer_load", 2}, {"draft", 3},    {"quantize", 3}, {"speculative", 4},
    {"bench", 5},          {"train", 5},    {"api", 6},      {"server", 7},
};

// Folders built on the public API alone, as any outside program would be: they include
// include/eagle2/ and their own folder, nothing of the engine's internals.
const std::set<std::string> kApiClients = {"server"};
// What tools may include of the server: the class the CLI runs and its options, whose headers
// hold only standard types (the rest of src/server/ sits behind Server's pointer).
const std::set<std::string> kServerHeadersForTools = {
    "server/http_server.h", "server/server_options.h", "server/bench_serve.h"};

// Public headers (include/eagle2/) that the engine itself is built on, from layer 0 up: the one
// exception type, the one number parser and the chart writer. Every other public header is a
// facade over the engine and only src/api may include it.
const std::set<std::string> kSharedPublicHeaders = {"eagle2/error.h", "eagle2/parse_number.h",
                                                    "eagle2/svg_chart.h"};

// The folder of a quoted include with a folder part ('#include "model/batch.h"' -> "model"), or ""
// for any other line. Plain string scanning: std::regex trips GCC 12's -Wmaybe-uninitialized in
// the sanitizer build.
std::string included_folder(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || line[i] != '"') return "";
  const size_t slash = line.find('/', i + 1), quote = line.find('"', i + 1);
  if (slash == std::string::npos || quote == std::string::npos || slash > quote) return "";
  const std::string folder = line.substr(i + 1, slash - i - 1);
  if (folder.empty() ||
      folder.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") != std::string::npos)
    return "";
  return folder;
}

// The path of an #include line and whether it is in angle brackets; "" for any other line.
std::string included_path(const std::string& line, bool* angled) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return "";
  *angled = line[i] == '<';
  const size_t end = line.find(*angled ? '>' : '"', i + 1);
  return end == std::string::npos ? "" : line.substr(i + 1, end - i - 1);
}

// Every #include of the files below `dir` (recursively) with extension .h or .cpp, as
// (file relative to the source root, included path, angled).
struct Include {
  std::string file, path;
  bool angled;
};
std::vector<Include> includes_below(const fs::path& dir) {
  std::vector<Include> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    const std::string text = test::read_file(entry.path().string());
    const std::string file = fs::relative(entry.path(), fs::path(EAGLE2_SOURCE_DIR)).string();
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      bool angled = false;
      const std::string path = included_path(text.substr(begin, end - begin), &angled);
      if (!path.empty()) out.push_back({file, path, angled});
      begin = end + 1;
    }
  }
  return out;
}

TEST(Layering, IncludedPathReadsBothForms) {
  bool angled = false;
  EXPECT_EQ(included_path("#include \"eagle2/model.h\"", &angled), "eagle2/model.h");
  EXPECT_FALSE(angled);
  EXPECT_EQ(included_path(" # include <CLI/CLI.hpp>  // why", &angled), "CLI/CLI.hpp");
  EXPECT_TRUE(angled);
  EXPECT_EQ(included_path("// #include \"model/x.h\"", &angled), "");
}

TEST(Layering, ToolsIncludeOnlyThePublicApiAndTheirOwnHeaders) {
  std::vector<std::string> violations;
  const std::vector<Include> all = includes_below(fs::path(EAGLE2_SOURCE_DIR) / "tools");
  for (const Include& inc : all) {
    if (inc.angled) continue;  // the standard library and system packages (CLI11, ...)
    const bool own = inc.path.find('/') == std::string::npos &&
                     fs::exists((fs::path(EAGLE2_SOURCE_DIR) / inc.file).parent_path() / inc.path);
    if (!own && !inc.path.starts_with("eagle2/") && !kServerHeadersForTools.count(inc.path))
      violations.push_back(inc.file + " includes \"" + inc.path + "\"");
  }
  EXPECT_GT(all.size(), 50u);
  EXPECT_TRUE(violations.empty())
      << "tools see only include/eagle2/ (add to the public API what they need): "
      << ::testing::PrintToString(violations);
}

// The server's headers that tools include must themselves stay free of anything but the
// standard library and each other, or the CLI would compile against internals after all.
TEST(Layering, ServerHeadersForToolsIncludeOnlyTheStandardLibrary) {
  for (const std::string& header : kServerHeadersForTools) {
    const std::string text =
        test::read_file((fs::path(EAGLE2_SOURCE_DIR) / "src" / header).string());
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      bool angled = false;
      const std::string path = included_path(text.substr(begin, end - begin), &angled);
      begin = end + 1;
      if (path.empty()) continue;
      EXPECT_TRUE(angled ? path.find('/') == std::string::npos
                         : kServerHeadersForTools.count(path) > 0)
          << header << " includes " << path;
    }
  }
}

TEST(Layering, PublicHeadersIncludeOnlyPublicHeadersAndTheStandardLibrary) {
  std::vector<std::string> violations;
  const std::vector<Include> all = includes_below(fs::path(EAGLE2_SOURCE_DIR) / "include");
  for (const Include& inc : all) {
    const bool ok =
        inc.angled ? inc.path.find('/') == std::string::npos : inc.path.starts_with("eagle2/");
    if (!ok) violations.push_back(inc.file + " includes " + inc.path);
  }
  EXPECT_GT(all.size(), 20u);
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
}

TEST(Layering, IncludedFolderReadsOnlyQuotedFolderIncludes) {
  EXPECT_EQ(included_folder("#include \"model/batch.h\""), "model");
  EXPECT_EQ(included_folder("  #  include \"core/error.h\"  // why"), "core");
  EXPECT_EQ(included_folder("#include <nlohmann/json.hpp>"), "");
  EXPECT_EQ(included_folder("#include \"batch.h\""), "");
  EXPECT_EQ(included_folder("// #include \"train/x.h\""), "");
}

TEST(Layering, EveryFolderHasALayer) {
  for (const auto& dir : fs::directory_iterator(fs::path(EAGLE2_SOURCE_DIR) / "src")) {
    if (!dir.is_directory()) continue;
    EXPECT_TRUE(kLayer.count(dir.path().filename().string()))
        << "src/" << dir.path().filename().string()
        << " has no layer: add it to kLayer here and to docs/ARCHITECTURE.md";
  }
}

TEST(Layering, NoIncludeOfAPeerOrAHigherLayer) {
  std::vector<std::string> violations;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(EAGLE2_SOURCE_DIR) / "src")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    const std::string folder = entry.path().parent_path().filename().string();
    auto own = kLayer.find(folder);
    if (own == kLayer.end()) continue;  // reported by EveryFolderHasALayer
    ++files;
    const std::string text = test::read_file(entry.path().string());
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      const std::string line = text.substr(begin, end - begin);
      begin = end + 1;
      const std::string target = included_folder(line);
      if (target.empty()) continue;
      if (target == folder) continue;
      if (target == "eagle2") {
        // The public headers: the ones the engine shares with its callers from layer 0 up, the
        // rest for the API's implementation only.
        bool angled = false;
        const std::string path = included_path(line, &angled);
        if (!kSharedPublicHeaders.count(path) && folder != "api" && !kApiClients.count(folder))
          violations.push_back("src/" + folder + "/" + entry.path().filename().string() +
                               " includes " + path + " (only src/api implements the public API)");
        continue;
      }
      auto to = kLayer.find(target);
      if (kApiClients.count(folder)) {
        violations.push_back("src/" + folder + "/" + entry.path().filename().string() +
                             " includes " + target + "/ (it is built on the public API alone)");
      } else if (to == kLayer.end() || to->second >= own->second) {
        violations.push_back("src/" + folder + "/" + entry.path().filename().string() +
                             " includes " + target + "/");
      }
    }
  }
  EXPECT_GT(files, 50);
  EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
}

}  // namespace
}  // namespace eagle2
