// LlamaModel: loading checks and context limits; the checkpoint checks it shares with the EAGLE
// head's loader (checkpoint_checks.h) are tested here for both.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "core/error.h"
#include "draft/eagle_head.h"
#include "io/safetensors.h"
#include "model/llama_model.h"
#include "model/random_model.h"
#include "quantize/random_gguf.h"
#include "support/errors.h"
#include "support/random_models.h"
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
            dir +
                "/model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight' has shape "
                "[96, 64], expected [100, 64]");
  EXPECT_EQ(error_of([] { LlamaModel::load("/no/such/model"); }),
            "/no/such/model: model directory not found");
}

// Every tensor of a checkpoint file, for rewriting it (data pointers into `store`'s mapping).
std::vector<TensorToWrite> tensors_of(const TensorStore& store) {
  std::vector<TensorToWrite> out;
  for (const auto& [name, t] : store.tensors()) out.push_back({name, t.dtype, t.shape, t.data});
  return out;
}

// A copy of model folder `from` under a new name, its tensors passed through `edit` first.
std::string edited_model(const std::string& from, const std::string& name,
                         const std::function<void(std::vector<TensorToWrite>&)>& edit) {
  const std::string dir = test::temp_dir(name);
  std::filesystem::copy_file(from + "/config.json", dir + "/config.json");
  const TensorStore store = TensorStore::open_dir(from);
  std::vector<TensorToWrite> tensors = tensors_of(store);
  edit(tensors);
  write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

TensorToWrite& find_tensor(std::vector<TensorToWrite>& tensors, const std::string& name) {
  for (TensorToWrite& t : tensors)
    if (t.name == name) return t;
  throw std::runtime_error("test setup: no tensor " + name);
}

void write_config(const std::string& dir, const LlamaConfig& c) {
  test::write_file(dir + "/config.json", c.to_json());
}

// num_hidden_layers far beyond the checkpoint is refused by naming the last layer's tensor,
// before anything is allocated per layer (it used to allocate for every claimed layer first).
TEST(LlamaModel, MoreLayersThanTheCheckpointFailsBeforeAllocating) {
  const std::string dir = test::temp_dir("too-many-layers");
  LlamaConfig c = test::tiny_config();
  write_random_model(dir, c, DType::F32, 1);
  c.num_layers = config_limits::kMaxLayers;
  write_config(dir, c);
  EXPECT_EQ(error_of([&] { LlamaModel::load(dir); }),
            dir +
                ": tensor 'model.layers.65535.input_layernorm.weight' not found (config.json has "
                "num_hidden_layers 65536)");
}

// Fewer layers than the checkpoint: the tensors of the extra layers are not silently ignored.
TEST(LlamaModel, TensorsTheModelDoesNotUseAreErrors) {
  const std::string dir = test::temp_dir("too-few-layers");
  LlamaConfig c = test::tiny_config();
  write_random_model(dir, c, DType::F32, 1);
  c.num_layers = 1;
  write_config(dir, c);
  EXPECT_EQ(error_of([&] { LlamaModel::load(dir); }),
            dir +
                "/model.safetensors: tensor 'model.layers.1.input_layernorm.weight' is past the "
                "last layer: config.json has num_hidden_layers 1");

  const std::string good = test::temp_dir("extras-base");
  write_random_model(good, test::tiny_config(), DType::F32, 1);
  const std::vector<float> small(16, 0.5f);
  for (const std::string name : {"model.layers.0.self_attn.q_proj.bias", "model.extra.weight"}) {
    SCOPED_TRACE(name);
    const std::string bad = edited_model(good, "extra-tensor", [&](std::vector<TensorToWrite>& t) {
      t.push_back({name, DType::F32, {16}, small.data()});
    });
    EXPECT_EQ(error_of([&] { LlamaModel::load(bad); }),
              bad + "/model.safetensors: unexpected tensor '" + name +
                  "': not a weight of the model config.json describes");
  }
}

// Older Hugging Face checkpoints store RoPE's inverse frequencies per layer; they are redundant
// with config.json and accepted, in a model and in a head alike.
TEST(LlamaModel, PersistedRopeBuffersAreAccepted) {
  const std::string good = test::temp_dir("rope-buffer-base");
  write_random_model(good, test::tiny_config(), DType::F32, 1);
  const std::vector<float> inv_freq(4, 0.5f);  // head_dim 8
  const std::string dir = edited_model(good, "rope-buffer", [&](std::vector<TensorToWrite>& t) {
    for (int layer = 0; layer < 2; ++layer)
      t.push_back({"model.layers." + std::to_string(layer) + ".self_attn.rotary_emb.inv_freq",
                   DType::F32,
                   {4},
                   inv_freq.data()});
  });
  auto model = LlamaModel::load(dir);
  EXPECT_EQ(model->config().num_layers, 2);

  const std::string head = test::write_random_head("rope-buffer", *model);
  const std::string head_copy =
      edited_model(head, "rope-buffer-head", [&](std::vector<TensorToWrite>& t) {
        t.push_back({"layers.0.self_attn.rotary_emb.inv_freq", DType::F32, {4}, inv_freq.data()});
      });
  EXPECT_TRUE(EagleHead::load(head_copy, *model)->has_fc_bias());
}

// The fused q/k/v and gate/up matmuls take matrices of different dtypes (a Q4_K_M file puts Q6_K
// next to Q4_K): a mixed checkpoint loads and runs (test_matmul checks the fused outputs equal
// separate ones bit for bit).
TEST(LlamaModel, MixedDtypesInAFusedProjectionLoadAndRun) {
  const LlamaConfig c = test::tiny_config();
  const std::string bf16 = test::temp_dir("mixed-bf16"), f16 = test::temp_dir("mixed-f16");
  write_random_model(bf16, c, DType::BF16, 1);
  write_random_model(f16, c, DType::F16, 1);
  const TensorStore f16_store = TensorStore::open_dir(f16);
  const std::string dir = edited_model(bf16, "mixed", [&](std::vector<TensorToWrite>& t) {
    for (const std::string name :
         {"model.layers.1.self_attn.v_proj.weight", "model.layers.0.mlp.up_proj.weight"})
      find_tensor(t, name) = {name, DType::F16, f16_store.get(name).shape,
                              f16_store.get(name).data};
  });
  auto m = LlamaModel::load(dir);
  EXPECT_EQ(m->weight_dtypes(), (std::vector<std::string>{"BF16", "F16"}));
  ThreadPool pool(1);
  KvCache kv = m->make_cache(8);
  const std::vector<int32_t> ids = {1, 2, 3};
  const int32_t row = 2;
  ForwardResult out;
  m->forward(Batch::causal(ids, 0), kv, std::span(&row, 1), out, pool);
  ASSERT_EQ(out.logits.size(), static_cast<size_t>(c.vocab_size));
  for (float v : out.logits) ASSERT_TRUE(std::isfinite(v));
}

// The head's loader applies the same checks to its tensors; mixed dtypes load there too.
TEST(LlamaModel, EagleHeadRefusesUnusedTensorsAndLoadsMixedDtypes) {
  auto model = test::load_random_model("head-checks", test::tiny_config());
  const std::string head = test::write_random_head("head-checks", *model);
  const std::vector<float> small(64, 0.5f);
  const std::string extra = edited_model(head, "head-extra", [&](std::vector<TensorToWrite>& t) {
    t.push_back({"layers.1.post_attention_layernorm.weight", DType::F32, {64}, small.data()});
  });
  EXPECT_EQ(error_of([&] { EagleHead::load(extra, *model); }),
            extra +
                "/model.safetensors: unexpected tensor 'layers.1.post_attention_layernorm.weight' "
                "for an EAGLE-1/2 head");

  std::vector<uint16_t> as_f16;
  const std::string mixed = edited_model(head, "head-mixed", [&](std::vector<TensorToWrite>& t) {
    TensorToWrite& k = find_tensor(t, "layers.0.self_attn.k_proj.weight");
    const auto* f = static_cast<const float*>(k.data);
    for (int64_t i = 0; i < k.shape[0] * k.shape[1]; ++i) as_f16.push_back(f32_to_f16(f[i]));
    k.dtype = DType::F16;
    k.data = as_f16.data();
  });
  EXPECT_NO_THROW(EagleHead::load(mixed, *model));
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

// LoadOptions::upcast_f32: BF16 weights become F32 of the same values, so the model computes
// exactly what an F32 checkpoint of those values computes (float32 activations throughout), which
// the BF16 weights used in place do not (their matmuls round activations to bf16).
TEST(LlamaModel, UpcastLoadsBf16WeightsAsTheirF32Values) {
  const LlamaConfig c = test::tiny_config();
  const std::string bf16 = test::temp_dir("upcast-bf16");
  write_random_model(bf16, c, DType::BF16, 3, 0.15f);
  std::vector<std::vector<float>> values;
  values.reserve(64);
  const std::string f32 = edited_model(bf16, "upcast-f32", [&](std::vector<TensorToWrite>& ts) {
    for (TensorToWrite& t : ts) {
      if (t.dtype != DType::BF16) continue;
      int64_t n = 1;
      for (int64_t e : t.shape) n *= e;
      values.emplace_back(static_cast<size_t>(n));
      convert_to_f32(DType::BF16, t.data, values.back().data(), values.back().size());
      t.dtype = DType::F32;
      t.data = values.back().data();
    }
  });
  auto up = LlamaModel::load(bf16, {.upcast_f32 = true});
  auto ref = LlamaModel::load(f32);
  auto raw = LlamaModel::load(bf16);
  EXPECT_EQ(up->weight_dtypes(), std::vector<std::string>{"F32"});
  EXPECT_EQ(raw->weight_dtypes(), std::vector<std::string>{"BF16"});
  EXPECT_EQ(up->lm_head().dtype, DType::F32);
  const std::vector<int32_t> ids = {1, 5, 9, 40, 3}, rows = {0, 1, 2, 3, 4};
  ThreadPool pool(2);
  std::vector<std::vector<float>> logits;
  for (LlamaModel* m : {up.get(), ref.get(), raw.get()}) {
    KvCache kv = m->make_cache(16);
    ForwardResult out;
    m->forward(Batch::causal(ids, 0), kv, rows, out, pool);
    logits.push_back(out.logits);
  }
  const size_t bytes = logits[0].size() * sizeof(float);
  EXPECT_EQ(std::memcmp(logits[0].data(), logits[1].data(), bytes), 0);
  EXPECT_NE(std::memcmp(logits[0].data(), logits[2].data(), bytes), 0);
}

// Quantized weights are dequantized by the upcast: rows read back as the quantized model's own
// embed() dequantizes them.
TEST(LlamaModel, UpcastDequantizesQuantizedWeights) {
  const std::string path = test::temp_dir("upcast-q8") + "/m.gguf";
  LlamaConfig c = test::tiny_config();
  c.vocab_size = 300;  // the tokenizer's byte pieces (up to id 258) must fit
  write_random_gguf(path, c, DType::Q8_0, 4,
                    std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm/tokenizer.model");
  auto q8 = LlamaModel::load(path);
  auto up = LlamaModel::load(path, {.upcast_f32 = true});
  EXPECT_NE(q8->weight_dtypes(), std::vector<std::string>{"F32"});
  EXPECT_EQ(up->weight_dtypes(), std::vector<std::string>{"F32"});
  const int64_t d = up->config().hidden_size;
  std::vector<float> a(static_cast<size_t>(d)), b(static_cast<size_t>(d));
  for (int32_t t : {0, 7, 299}) {
    q8->embed(t, a.data());
    up->embed(t, b.data());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << t;
  }
}

}  // namespace
}  // namespace eagle2
