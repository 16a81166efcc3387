// LlamaModel: loading checks and context limits.
#include <gtest/gtest.h>

#include "core/error.h"
#include "model/llama_model.h"
#include "model/random_model.h"
#include "support/random_models.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

TEST(LlamaModel, MistralSlidingWindowBoundsTheContext) {
  LlamaConfig c = test::tiny_config();
  c.architecture = "MistralForCausalLM";
  c.sliding_window = 64;
  auto m = test::load_random_model("mistral", c);
  EXPECT_EQ(m->config().architecture, "MistralForCausalLM");
  EXPECT_EQ(m->make_cache(64).capacity(), 64);
  EXPECT_EQ(error_of([&] { m->make_cache(65); }),
            "--ctx 65 exceeds the model's sliding_window 64: contexts beyond the window are not "
            "supported");
  EXPECT_EQ(error_of([&] { m->make_cache(513); }),
            "--ctx 513 exceeds the model's max_position_embeddings 512");
}

TEST(LlamaModel, MissingAndMisshapenTensorsAreClearErrors) {
  const LlamaConfig c = test::tiny_config();
  const std::string dir = test::temp_dir("bad-model");
  write_random_model(dir, c, DType::F32, 1);
  // A config whose hidden size disagrees with the stored tensors.
  LlamaConfig wrong = c;
  wrong.intermediate_size = 100;
  {
    FILE* f = std::fopen((dir + "/config.json").c_str(), "w");
    const std::string j = wrong.to_json();
    std::fwrite(j.data(), 1, j.size(), f);
    std::fclose(f);
  }
  EXPECT_EQ(error_of([&] { LlamaModel::load(dir); }),
            dir + "/model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight' has shape "
                  "[96, 64], expected [100, 64]");
  EXPECT_EQ(error_of([] { LlamaModel::load("/no/such/model"); }),
            "/no/such/model: model directory not found");
}

TEST(LlamaModel, ForwardRejectsBadBatches) {
  auto m = test::load_random_model("bad-batch", test::tiny_config());
  ThreadPool pool(1);
  KvCache kv = m->make_cache(8);
  ForwardResult out;
  const std::vector<int32_t> ids = {1, 2, 3};
  const int32_t row = 5;
  EXPECT_EQ(error_of([&] { m->forward(Batch::causal(ids, 0), kv, std::span(&row, 1), out, pool); }),
            "forward: logit row 5 outside the batch of 3");
  const std::vector<int32_t> many(9, 1);
  EXPECT_EQ(error_of([&] { m->forward(Batch::causal(many, 0), kv, {}, out, pool); }),
            "position 8 is beyond the context size 8");
}

}  // namespace
}  // namespace eagle2
