#include "support/shared_data.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli.h"

namespace fs = std::filesystem;

namespace eagle2::test {

std::string shared_dir() {
  if (const char* env = std::getenv("EAGLE2_SHARED"); env && *env) {
    return fs::is_directory(env) ? std::string(env) : std::string();
  }
  fs::path p = fs::path(EAGLE2_SOURCE_DIR).parent_path() / "shared";
  return fs::is_directory(p) ? p.string() : std::string();
}

bool file_exists(const std::string& path) {
  return fs::exists(path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  out.close();
  if (!out) ADD_FAILURE() << path << ": cannot write";
}

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

double test_scale() {
  if (const char* env = std::getenv("EAGLE2_TEST_SCALE"); env && *env) {
    double v = std::atof(env);
    if (v > 0) return v;
  }
  return 1.0;
}

int scaled(int n) {
  int v = static_cast<int>(n * test_scale());
  return v < 1 ? 1 : v;
}

std::string temp_dir(const std::string& name) {
  const char* base = std::getenv("TMPDIR");
  fs::path root =
      fs::path(base && *base ? base : "/tmp") / ("eagle2-test-" + std::to_string(::getpid()));
  fs::path dir = root / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  static struct Cleanup {
    fs::path root;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(root, ec);
    }
  } cleanup{root};
  return dir.string();
}

std::string quant_types_file(std::string* why) {
  const std::string shared = shared_dir();
  const char* base = std::getenv("TMPDIR");
  const std::string dir = std::string(base && *base ? base : "/tmp") + "/eagle2-quant-types";
  const std::string file = dir + "/code-lm-mixed.gguf";
  if (shared.empty()) {
    *why = "../shared is absent";
    return "";
  }
  const CliRun made = run_shell("env SHARED=" + shared + " bash " + std::string(EAGLE2_SOURCE_DIR) +
                                    "/scripts/make_quant_types.sh " + dir + " 2>&1",
                                600);
  if (made.code == 77) {
    *why = made.out;
    return "";
  }
  EXPECT_EQ(made.code, 0) << made.out;
  EXPECT_TRUE(file_exists(file)) << made.out;
  return file;
}

}  // namespace eagle2::test
