// Where tests find ../shared (real models, golden outputs) and how big their samples should be.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace eagle2::test {

// ../shared beside the project, or $EAGLE2_SHARED. Empty when absent.
std::string shared_dir();

// Path of a file under ../shared. When ../shared is absent the calling test is skipped with a
// message; when it is present but the file is missing, the test fails (the data is broken).
#define EAGLE2_SHARED_FILE(var, relpath)                                           \
  std::string var;                                                                 \
  do {                                                                             \
    if (::eagle2::test::shared_dir().empty())                                      \
      GTEST_SKIP() << "../shared is absent: skipping (needs " << (relpath) << ")"; \
    var = ::eagle2::test::shared_dir() + "/" + (relpath);                          \
    ASSERT_TRUE(::eagle2::test::file_exists(var))                                  \
        << "../shared is present but " << var << " is missing";                    \
  } while (0)

bool file_exists(const std::string& path);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);  // fails the test on error
// Non-overlapping occurrences of needle (non-empty) in text.
int count_of(const std::string& text, const std::string& needle);

// 1.0 normally; EAGLE2_TEST_SCALE (e.g. 0.25 in the sanitizer pass) shrinks sample sizes of tests
// labelled slow. Never below 1 iteration.
double test_scale();
int scaled(int n);

// A fresh empty directory under the build's temp area, removed at exit of the test binary.
std::string temp_dir(const std::string& name);

// The bundled model with every GGUF type of issue 42 in one file (scripts/make_quant_types.sh's
// code-lm-mixed.gguf, made by llama.cpp's llama-quantize), made once into
// $TMPDIR/eagle2-quant-types and kept for the next test binary. Empty, with *why set, where
// ../shared or llama-quantize is absent (the caller skips); a failure to make it fails the test.
std::string quant_types_file(std::string* why);

// The folder of a file path (the text before its last '/').
inline std::string dir_of(const std::string& file) {
  return file.substr(0, file.rfind('/'));
}

}  // namespace eagle2::test
