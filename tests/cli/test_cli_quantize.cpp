// eagle2 quantize and make-random --dtype q8_0|q4_0, run as a user would: the files they write
// run in eagle2 generate (the folder's Q8_0 file and the bf16 GGUF's give the same text as
// llama.cpp's own Q8_0 file) and in llama.cpp's llama-completion where ../shared/tools has it; bad
// input is one error line.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::CliRun;
using test::run_cli_split;

const std::string kGenerate = " -p 'def fibonacci(n):' -n 16 -t 1";

std::string without_trailing_newlines(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST(CliQuantize, QuantizedFilesGenerateLlamaCppsQ8_0Text) {
  const std::string dir = test::temp_dir("cli-quantize");
  const CliRun folder =
      run_cli_split("quantize " + test::kBundledModel + " " + dir + "/a.gguf --type q8_0");
  ASSERT_EQ(folder.code, 0) << folder.err;
  EXPECT_EQ(folder.out, "wrote " + dir +
                            "/a.gguf: 110 tensors from a Hugging Face folder, 85 Q8_0, 25 F32 "
                            "(26.2 MiB)\n");
  const CliRun a = run_cli_split("generate -m " + dir + "/a.gguf" + kGenerate);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_TRUE(a.out.starts_with("def fibonacci(n):\n")) << a.out;

  EAGLE2_SHARED_FILE(bf16, "data/gguf/code-lm-bf16.gguf");
  EAGLE2_SHARED_FILE(reference, "data/gguf/code-lm-q8_0.gguf");
  const CliRun file = run_cli_split("quantize " + bf16 + " " + dir + "/b.gguf --type q8_0");
  ASSERT_EQ(file.code, 0) << file.err;
  EXPECT_EQ(file.out, "wrote " + dir +
                          "/b.gguf: 110 tensors from a GGUF file, 85 Q8_0, 25 copied (26.2 MiB)\n");
  for (const std::string& other : {dir + "/b.gguf", reference}) {
    const CliRun b = run_cli_split("generate -m " + other + kGenerate);
    EXPECT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(b.out, a.out) << other;
  }
}

TEST(CliQuantize, MakeRandomWritesARunnableGguf) {
  const std::string path = test::temp_dir("cli-quantize-random") + "/r.gguf";
  const CliRun made = run_cli_split("make-random -o " + path + " --dtype q4_0 --seed 3");
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_EQ(made.out, "wrote " + path + ": 2 layers, hidden 64, vocab 512, Q4_0\n");
  const CliRun g = run_cli_split("generate -m " + path + " -p 'hello world' -n 8 -t 1");
  EXPECT_EQ(g.code, 0) << g.err;
  EXPECT_TRUE(g.out.starts_with("hello world")) << g.out;
  const CliRun info = run_cli_split("info -m " + path);
  EXPECT_EQ(info.code, 0) << info.err;
  EXPECT_NE(info.out.find("dtypes         F32, Q4_0"), std::string::npos) << info.out;
}

// -o NAME.gguf with a float dtype writes one GGUF file (it used to write a folder named
// NAME.gguf), holding the values of the folder make-random writes for the same seed: both
// generate the same tokens.
TEST(CliQuantize, MakeRandomFloatDtypeToGgufWritesAFile) {
  const std::string dir = test::temp_dir("cli-quantize-random-float");
  for (const std::string dtype : {"f16", "bf16"}) {
    const std::string path = dir + "/r-" + dtype + ".gguf", folder = dir + "/r-" + dtype;
    const CliRun made = run_cli_split("make-random -o " + path + " --dtype " + dtype + " --seed 3");
    ASSERT_EQ(made.code, 0) << made.err;
    const std::string upper = dtype == "f16" ? "F16" : "BF16";
    EXPECT_EQ(made.out, "wrote " + path + ": 2 layers, hidden 64, vocab 512, " + upper + "\n");
    EXPECT_TRUE(std::filesystem::is_regular_file(path)) << path;
    const CliRun info = run_cli_split("info -m " + path);
    EXPECT_EQ(info.code, 0) << info.err;
    EXPECT_NE(info.out.find("dtypes         " + upper + ", F32"), std::string::npos) << info.out;
    const CliRun f = run_cli_split("make-random -o " + folder + " --dtype " + dtype + " --seed 3");
    ASSERT_EQ(f.code, 0) << f.err;
    // Token ids: the folder has no tokenizer.
    const std::string prompt = " --ids 1,5,9,30 -n 12 -t 1";
    const CliRun a = run_cli_split("generate -m " + path + prompt);
    const CliRun b = run_cli_split("generate -m " + folder + prompt);
    ASSERT_EQ(a.code, 0) << a.err;
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_FALSE(a.out.empty());
    EXPECT_EQ(a.out, b.out) << dtype;
  }
}

TEST(CliQuantize, BadInputIsOneErrorLine) {
  const std::string dir = test::temp_dir("cli-quantize-bad");
  const std::string model = test::kBundledModel, out = dir + "/out.gguf";
  const std::string readme = std::string(EAGLE2_SOURCE_DIR) + "/README.md";
  for (const auto& [args, code, message] : std::vector<std::tuple<std::string, int, std::string>>{
           {"quantize " + dir + "/none " + out + " --type q8_0", 1,
            dir + "/none: not found (give a Hugging Face model folder or a .gguf file)"},
           {"quantize " + readme + " " + out + " --type q8_0", 1,
            readme + ": GGUF: not a GGUF file (no GGUF magic)"},
           {"quantize " + dir + " " + out + " --type q8_0", 1,
            dir +
                ": not a model: no config.json (give a Hugging Face model folder or a .gguf file)"},
           {"quantize " + model + " " + dir + "/no/out.gguf --type q4_0", 1,
            dir + "/no/out.gguf: cannot write: the folder " + dir + "/no does not exist"},
           {"quantize " + model + " " + dir + "/out --type q8_0", 1,
            dir + "/out: the output is a GGUF file: give a name ending in .gguf"},
           {"quantize " + model + " " + out + " --type q5_0", 2,
            "--type: 'q5_0' is not one of q8_0, q4_0"},
           {"quantize " + model + " " + out, 2, "--type: is required"},
           {"make-random -o " + out + " --dtype q5_0", 1,
            "--dtype: 'q5_0' is not one of f32, f16, bf16, q8_0, q4_0"},
           {"make-random -o " + dir + "/r --tokenizer " + model + "/tokenizer.model", 1,
            "--tokenizer: only a GGUF model (-o NAME.gguf, or --dtype q8_0, q4_0) carries one"},
           {"make-random -o " + out + " --dtype q8_0 --tokenizer " + readme, 1,
            "tokenizer: " + readme +
                " is not a valid SentencePiece model (cannot parse it: truncated, or not a "
                "tokenizer.model)"},
       }) {
    const CliRun r = run_cli_split(args);
    EXPECT_EQ(r.code, code) << args;
    EXPECT_EQ(r.err, "error: " + message + "\n") << args;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

// llama.cpp's llama-completion loads and runs what quantize writes. Skipped where ../shared/tools
// has no llama.cpp, or where its build (for AVX-512 machines) cannot run.
TEST(CliQuantize, LlamaCppRunsTheFiles) {
  if (test::shared_dir().empty()) GTEST_SKIP() << "../shared is absent: no llama.cpp to run";
  const std::string bin = test::shared_dir() + "/tools/llama.cpp/bin/llama-completion";
  if (!test::file_exists(bin)) GTEST_SKIP() << bin << " is absent: skipping the llama.cpp check";
  const std::string dir = test::temp_dir("cli-quantize-llama");
  for (const std::string type : {"q8_0", "q4_0"}) {
    const std::string path = dir + "/" + type + ".gguf";
    const CliRun q =
        run_cli_split("quantize " + test::kBundledModel + " " + path + " --type " + type);
    ASSERT_EQ(q.code, 0) << q.err;
    // llama-completion writes its text through a logging thread that now and then exits before
    // writing the last pieces (docs/PARITY.md): a whole text ends with its closing blank line, so
    // it is run again (at most 5 times) until one does.
    const std::string text = dir + "/" + type + ".txt";
    std::string got;
    for (int attempt = 0; attempt < 5 && !got.ends_with("\n\n"); ++attempt) {
      const int status = std::system(("timeout 120 " + bin + " -m " + path + kGenerate +
                                      " --temp 0 --samplers top_k --top-k 1 -no-cnv > " + text +
                                      " 2> " + dir + "/" + type + ".log")
                                         .c_str());
      ASSERT_TRUE(WIFEXITED(status)) << type;
      if (WEXITSTATUS(status) == 128 + SIGILL) GTEST_SKIP() << bin << " cannot run on this CPU";
      ASSERT_EQ(WEXITSTATUS(status), 0)
          << type << ": " << test::read_file(dir + "/" + type + ".log");
      got = test::read_file(text);
    }
    ASSERT_TRUE(got.ends_with("\n\n")) << type << ": five runs lost their ends: " << got;
    EXPECT_TRUE(got.starts_with(" def fibonacci(n):\n")) << type << ": " << got;
    EXPECT_GT(got.size(), std::string(" def fibonacci(n):\n").size() + 8) << type << ": " << got;
    if (type == "q8_0") {
      // The same blocks as llama.cpp's own Q8_0 file: the same greedy text as eagle2's.
      const CliRun ours = run_cli_split("generate -m " + path + kGenerate);
      EXPECT_EQ(without_trailing_newlines(got.substr(1)), without_trailing_newlines(ours.out));
    }
  }
}

}  // namespace
}  // namespace eagle2
