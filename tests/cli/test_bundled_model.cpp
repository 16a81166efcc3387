// The bundled default model and head (models/, see models/README.md): the limits the project set
// for them (memory-bound decoding like a real model: bf16 weights of at least 48 MiB, at least 12
// layers, lm_head at most 15% of the parameters, all bundled files under 80 MB), and the README's
// main job, `eagle2 demo`, on them: identical completions, tau, speedup.
#include <gtest/gtest.h>

#include <filesystem>

#include "draft/eagle_head.h"
#include "io/safetensors.h"
#include "model/llama_model.h"
#include "support/cli.h"
#include "support/shared_data.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

const std::string kModels = std::string(EAGLE2_SOURCE_DIR) + "/models";

TEST(BundledModel, MeetsTheSizeLimits) {
  const std::string dir = kModels + "/code-lm";
  const TensorStore st = TensorStore::open_dir(dir);
  int64_t params = 0, bytes = 0;
  for (const auto& [name, t] : st.tensors()) {
    EXPECT_EQ(t.dtype, DType::BF16) << name;
    params += t.numel();
    bytes += t.numel() * static_cast<int64_t>(dtype_size(t.dtype));
  }
  EXPECT_GE(bytes, int64_t{48} << 20);  // 1.5x the 32 MiB L3 of the reference machine
  auto model = LlamaModel::load(dir);
  const LlamaConfig& cfg = model->config();
  EXPECT_GE(cfg.num_layers, 12);
  const int64_t lm_head = cfg.vocab_size * cfg.hidden_size;  // tied or not, one V x d matrix
  EXPECT_LE(static_cast<double>(lm_head), 0.15 * static_cast<double>(params));
  auto tok = Tokenizer::load(dir + "/tokenizer.model");
  EXPECT_EQ(tok->vocab_size(), cfg.vocab_size);
  auto head = EagleHead::load(kModels + "/code-lm-eagle", *model);
  EXPECT_EQ(head->config().num_layers, 1);

  // Issue 4 set 80 MB for the model and its head; the drafters of issue 14 brought the folder to
  // 78.7 MB, and issue 15's EAGLE-3 head (about 6 MB) cannot fit beside them, so the bound is
  // 90 MB since (models/README.md).
  uintmax_t all = 0;
  for (const auto& e : fs::recursive_directory_iterator(kModels))
    if (e.is_regular_file()) all += e.file_size();
  EXPECT_LT(all, 90'000'000u);
  EXPECT_TRUE(fs::exists(dir + "/train_log.tsv"));
  EXPECT_TRUE(fs::exists(kModels + "/README.md"));
}

TEST(BundledModel, DemoRunsFromTheRepositoryRoot) {
  const auto r = test::run_cli("demo -n 48 -t 2");  // default model and head, found via the build
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::count_of(r.out, "| identical to plain decoding\n"), 4) << r.out;
  EXPECT_NE(r.out.find("EAGLE-2's completions are identical to plain decoding's."),
            std::string::npos)
      << r.out;
  std::printf("%s", r.out.c_str());
}

// models/code-lm-eagle3 (issue 15): one decoder layer of the target's width with its own draft
// vocabulary, bf16, under the 10 MB each bundled drafter keeps to; the demo drafting with it
// prints plain decoding's completions.
TEST(BundledModel, TheEagle3HeadIsOneLayerOfTheTargetsWidth) {
  auto model = LlamaModel::load(kModels + "/code-lm");
  const std::string dir = kModels + "/code-lm-eagle3";
  auto head = EagleHead::load(dir, *model);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(head->config().num_layers, 1);
  EXPECT_EQ(head->config().hidden_size, model->config().hidden_size);
  EXPECT_EQ(head->weights_dtype(), "BF16");
  EXPECT_LT(head->draft_vocab_size(), model->config().vocab_size);
  uintmax_t bytes = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) bytes += e.file_size();
  EXPECT_LT(bytes, 10'000'000u);
  EXPECT_TRUE(fs::exists(dir + "/train_head.log"));

  const auto r = test::run_cli("demo -n 48 -t 2 --draft " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(test::count_of(r.out, "| identical to plain decoding\n"), 4) << r.out;
  EXPECT_NE(r.out.find("EAGLE-3 head"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace eagle2
