// `eagle2 generate` on the shared quantized GGUF files (Q8_0, Q4_0, and Q4_K_M with its Q4_K and
// Q6_K tensors) writes the same text on every kernel path this CPU has (EAGLE2_KERNEL=scalar,
// avx2, avx512): quant_matmul.h fixes one reduction order for all paths, so the logits are the
// same bits and greedy decoding picks the same tokens. The [stats] line names the path, which
// shows the override took effect.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "kernels/cpu.h"
#include "support/cli.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// Sets EAGLE2_KERNEL for the child processes and restores it after the test.
class KernelOverride {
 public:
  KernelOverride() {
    if (const char* v = std::getenv("EAGLE2_KERNEL")) saved_ = v;
  }
  ~KernelOverride() {
    if (saved_)
      ::setenv("EAGLE2_KERNEL", saved_->c_str(), 1);
    else
      ::unsetenv("EAGLE2_KERNEL");
  }
  void set(KernelPath p) { ::setenv("EAGLE2_KERNEL", kernel_path_name(p), 1); }

 private:
  std::optional<std::string> saved_;
};

TEST(CliQuantPaths, GenerateWritesTheSameTextOnEveryKernelPath) {
  KernelOverride kernel;
  for (const char* q : {"q4_k_m", "q8_0", "q4_0"}) {
    EAGLE2_SHARED_FILE(path, std::string("data/gguf/code-lm-") + q + ".gguf");
    std::string reference;
    for (KernelPath p : {KernelPath::Scalar, KernelPath::Avx2, KernelPath::Avx512}) {
      if (!cpu_supports(p)) continue;
      kernel.set(p);
      const test::CliRun r =
          test::run_cli_split("generate -m " + path + " -p 'def fib(n):' -n 40 -t 2");
      ASSERT_EQ(r.code, 0) << q << " " << kernel_path_name(p) << ": " << r.err;
      EXPECT_NE(r.err.find(std::string("kernels ") + kernel_path_name(p)), std::string::npos)
          << r.err;
      ASSERT_EQ(r.out.rfind("def fib(n):", 0), 0u) << r.out;
      EXPECT_NE(r.err.find("decode 40 tokens"), std::string::npos) << r.err;
      if (p == KernelPath::Scalar)
        reference = r.out;
      else
        EXPECT_EQ(r.out, reference) << q << ": " << kernel_path_name(p) << " differs from scalar";
    }
  }
}

// The head's --draft-weights (auto, as-is, q8_0, q4_0) changes what is drafted, never the text:
// on the bundled bf16 model and on the Q4_0 file every setting writes plain decoding's text.
TEST(CliQuantPaths, DraftWeightsNeverChangeTheText) {
  EAGLE2_SHARED_FILE(q4, "data/gguf/code-lm-q4_0.gguf");
  for (const std::string& model : {test::kBundledModel, q4}) {
    const std::string common = "generate -m " + model + " -p 'def fib(n):' -n 40 -t 2";
    const test::CliRun plain = test::run_cli_split(common);
    ASSERT_EQ(plain.code, 0) << plain.err;
    for (const char* w : {"auto", "as-is", "q8_0", "q4_0"}) {
      const test::CliRun r =
          test::run_cli_split(common + " --draft " + std::string(EAGLE2_SOURCE_DIR) +
                              "/models/code-lm-eagle --spec chain:6 --draft-weights " + w);
      ASSERT_EQ(r.code, 0) << w << ": " << r.err;
      EXPECT_EQ(r.out, plain.out) << model << " --draft-weights " << w;
    }
  }
  const test::CliRun bad =
      test::run_cli_split("generate -m " + test::kBundledModel + " -p x --draft-weights q5_0");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "error: --draft-weights: 'q5_0' is not one of auto, as-is, q8_0, q4_0\n");
}

}  // namespace
}  // namespace eagle2
