// Loading Medusa and Hydra heads (draft/medusa_heads.h): the published Medusa-1 layout (bare
// names, own lm_heads, medusa_lm_head.safetensors, a config naming the base model), bf16 and
// quantized heads, and hostile folders: each one clear error naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "draft/medusa_heads.h"
#include "io/safetensors.h"
#include "kernels/matmul.h"
#include "support/errors.h"
#include "support/medusa_heads.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;
using Kind = MedusaHeads::Kind;

class MedusaHeadsLoad : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    target_ = test::load_random_model("medusa-heads", test::tiny_config(), DType::F32, 4).release();
  }
  static void TearDownTestSuite() {
    delete target_;
    target_ = nullptr;
  }
  int64_t d() const { return target_->config().hidden_size; }
  int64_t V() const { return target_->config().vocab_size; }

  // A folder with this config.json and these f32 tensors (value v everywhere).
  struct T {
    std::string name;
    std::vector<int64_t> shape;
    float value = 0.01f;
  };
  std::string folder(const std::string& name, const std::string& config, const std::vector<T>& ts) {
    const std::string dir = test::temp_dir("medusa-hostile-" + name);
    std::filesystem::remove(dir + "/model.safetensors");
    std::ofstream(dir + "/config.json") << config;
    std::vector<std::vector<float>> data;
    std::vector<TensorToWrite> out;
    for (const T& t : ts) {
      data.emplace_back(static_cast<size_t>(t.shape[0] * (t.shape.size() > 1 ? t.shape[1] : 1)),
                        t.value);
      out.push_back({t.name, DType::F32, t.shape, nullptr});
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].data = data[i].data();
    if (!out.empty()) write_safetensors(dir + "/model.safetensors", out);
    return dir;
  }
  // The tensors of `heads` Medusa heads of one layer.
  std::vector<T> medusa_tensors(int heads) const {
    std::vector<T> ts;
    for (int k = 0; k < heads; ++k) {
      ts.push_back({"medusa_head." + std::to_string(k) + ".0.linear.weight", {d(), d()}});
      ts.push_back({"medusa_head." + std::to_string(k) + ".0.linear.bias", {d()}});
    }
    return ts;
  }
  std::string error_loading(const std::string& dir, Kind kind = Kind::Medusa) {
    return error_of([&] { MedusaHeads::load(dir, *target_, kind); });
  }

  static LlamaModel* target_;
  ThreadPool pool_{1};
};
LlamaModel* MedusaHeadsLoad::target_ = nullptr;

const std::string kTwoHeads = R"({"medusa_num_heads": 2, "medusa_num_layers": 1})";

TEST_F(MedusaHeadsLoad, PublishedMedusa1LayoutWithOwnLmHeads) {
  test::RandomHeadsOptions o;
  o.heads = 2;
  o.layers = 2;
  o.own_lm_heads = true;
  o.bare_names = true;
  const std::string dir = test::write_random_heads("published", *target_, o);
  // The published file name and a config that names the base model instead of its sizes.
  std::filesystem::rename(dir + "/model.safetensors", dir + "/medusa_lm_head.safetensors");
  std::ofstream(dir + "/config.json")
      << R"({"medusa_num_heads": 2, "medusa_num_layers": 2, "base_model_name_or_path": "x"})";
  auto heads = MedusaHeads::load(dir, *target_, Kind::Medusa);
  EXPECT_EQ(heads->num_heads(), 2);
  EXPECT_EQ(heads->num_layers(), 2);
  EXPECT_TRUE(heads->own_lm_heads());
  EXPECT_EQ(heads->parameter_count(), 2 * (2 * (d() * d() + d()) + V() * d()));
  // Head 1's log-probs come from its own lm_head: log_softmax(W_own h).
  const TensorStore st = TensorStore::open_files({dir + "/medusa_lm_head.safetensors"});
  std::vector<float> f(static_cast<size_t>(d()), 0.3f), h(static_cast<size_t>(d()));
  MedusaHeads::Scratch s;
  heads->states(1, f.data(), 1, h.data(), s, pool_);
  std::vector<float> lp(static_cast<size_t>(V())), logits(static_cast<size_t>(V()));
  const int head = 1;
  heads->logprobs(std::span(&head, 1), h.data(), lp.data(), pool_);
  const TensorView& W = st.get("1.2.weight");
  matmul(h.data(), 1, Matrix{W.dtype, W.shape[0], W.shape[1], W.data}, logits.data(), pool_);
  double lse = 0;
  for (float x : logits) lse += std::exp(static_cast<double>(x));
  for (int64_t v = 0; v < V(); ++v)
    EXPECT_NEAR(lp[static_cast<size_t>(v)], logits[static_cast<size_t>(v)] - std::log(lse), 1e-4);
}

TEST_F(MedusaHeadsLoad, Bf16HeadsQuantizeLikeTheTarget) {
  test::RandomHeadsOptions o;
  o.dtype = DType::BF16;
  auto heads =
      MedusaHeads::load(test::write_random_heads("bf16", *target_, o), *target_, Kind::Medusa);
  EXPECT_EQ(heads->weights_dtype(), "BF16");
  EXPECT_FALSE(heads->own_lm_heads());
  std::vector<float> f(static_cast<size_t>(d()));
  for (size_t i = 0; i < f.size(); ++i) f[i] = std::sin(static_cast<float>(i));
  std::vector<float> a(f.size()), b(f.size());
  MedusaHeads::Scratch s;
  heads->states(2, f.data(), 1, a.data(), s, pool_);
  heads->quantize_weights(DType::Q8_0);
  EXPECT_EQ(heads->weights_dtype(), "Q8_0");
  heads->states(2, f.data(), 1, b.data(), s, pool_);
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += std::abs(static_cast<double>(a[i]) - b[i]);
    scale += std::abs(static_cast<double>(a[i]));
  }
  EXPECT_GT(diff, 0.0);
  EXPECT_LT(diff, 0.02 * scale);
  EXPECT_THROW(heads->quantize_weights(DType::Q6_K), Error);
}

TEST_F(MedusaHeadsLoad, HydraHeadsReadWiderInputs) {
  test::RandomHeadsOptions o;
  o.hydra = true;
  auto heads =
      MedusaHeads::load(test::write_random_heads("wide", *target_, o), *target_, Kind::Hydra);
  EXPECT_EQ(heads->kind(), Kind::Hydra);
  EXPECT_EQ(heads->input_width(0), 2 * d());
  EXPECT_EQ(heads->input_width(2), 4 * d());
}

TEST_F(MedusaHeadsLoad, HostileConfigs) {
  const auto ts = medusa_tensors(2);
  const std::string base = "medusa-hostile-";
  auto err = [&](const std::string& name, const std::string& config) {
    return error_loading(folder(name, config, ts));
  };
  const std::string cfg = test::temp_dir(base + "c1") + "/config.json";
  EXPECT_EQ(err("c1", R"({"medusa_num_layers": 1})"),
            cfg + ": \"medusa_num_heads\" is missing (not a Medusa head folder)");
  EXPECT_EQ(err("c1", R"({"medusa_num_heads": 0, "medusa_num_layers": 1})"),
            cfg + ": \"medusa_num_heads\" must be an integer in [1, 16] (got 0)");
  EXPECT_EQ(err("c1", R"({"medusa_num_heads": 17, "medusa_num_layers": 1})"),
            cfg + ": \"medusa_num_heads\" must be an integer in [1, 16] (got 17)");
  EXPECT_EQ(err("c1", R"({"medusa_num_heads": "2", "medusa_num_layers": 1})"),
            cfg + ": \"medusa_num_heads\" must be an integer in [1, 16] (got \"2\")");
  EXPECT_EQ(
      err("c1", R"({"medusa_num_heads": 18446744073709551615, "medusa_num_layers": 1})"),
      cfg + ": \"medusa_num_heads\" must be an integer in [1, 16] (got 18446744073709551615)");
  EXPECT_EQ(err("c1", R"({"medusa_num_heads": 2})"), cfg + ": \"medusa_num_layers\" is missing");
  EXPECT_EQ(err("c1", R"({"medusa_num_heads": 2, "medusa_num_layers": 1, "hidden_size": 32})"),
            cfg + ": Medusa heads of hidden_size 32 do not match the target's 64");
  EXPECT_EQ(err("c1", R"({"medusa_num_heads": 2, "medusa_num_layers": 1, "vocab_size": 32000})"),
            cfg + ": Medusa heads of vocab_size 32000 do not match the target's 96");
  EXPECT_EQ(err("c1", "[1, 2]"), cfg + ": expected a JSON object");
  EXPECT_NE(err("c1", "{\"medusa_num_heads\": ").find(cfg + ": not valid JSON"), std::string::npos);
  EXPECT_EQ(err("c1", R"({"hydra_num_heads": 2, "hydra_num_layers": 1})"),
            cfg +
                ": these are Hydra heads (\"hydra_num_heads\"), not Medusa heads: use the spec "
                "hydra:DIR");
  EXPECT_EQ(error_loading(folder("c1", kTwoHeads, ts), Kind::Hydra),
            cfg +
                ": these are Medusa heads (\"medusa_num_heads\"), not Hydra heads: use the spec "
                "medusa:DIR");
  EXPECT_EQ(error_loading("/nonexistent/heads"),
            "/nonexistent/heads: Medusa head directory not found");
  const std::string empty = folder("c2", kTwoHeads, {});
  EXPECT_EQ(error_loading(empty), empty + ": no model.safetensors in the Medusa head folder");
}

TEST_F(MedusaHeadsLoad, HostileTensors) {
  const std::string where = test::temp_dir("medusa-hostile-t") + "/model.safetensors";
  auto err = [&](const std::vector<T>& ts) { return error_loading(folder("t", kTwoHeads, ts)); };
  // Fewer heads in the file than in config.json, and more.
  EXPECT_EQ(err(medusa_tensors(1)), where + ": tensor 'medusa_head.1.0.linear.weight' not found");
  EXPECT_EQ(err(medusa_tensors(3)), where +
                                        ": unexpected tensor 'medusa_head.2.0.linear.bias' for "
                                        "2 medusa heads of 1 layer(s)");
  auto ts = medusa_tensors(2);
  ts[2].shape = {d(), d() + 1};
  EXPECT_EQ(err(ts), where +
                         ": tensor 'medusa_head.1.0.linear.weight' has shape [64, 65], "
                         "expected [64, 64]");
  ts = medusa_tensors(2);
  ts[3].value = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(err(ts), where +
                         ": tensor 'medusa_head.1.0.linear.bias' has a non-finite value (nan) "
                         "at element 0");
  ts = medusa_tensors(2);
  ts[0].value = std::numeric_limits<float>::infinity();
  EXPECT_EQ(err(ts), where +
                         ": tensor 'medusa_head.0.0.linear.weight' has a non-finite value (inf) "
                         "at element 0");
  // An own lm_head on one head only.
  ts = medusa_tensors(2);
  ts.push_back({"medusa_head.0.1.weight", {V(), d()}});
  EXPECT_EQ(err(ts), where + ": tensor 'medusa_head.1.1.weight' not found");
  ts = medusa_tensors(2);
  ts.push_back({"medusa_head.1.1.weight", {V(), d()}});
  EXPECT_EQ(err(ts), where +
                         ": unexpected tensor 'medusa_head.1.1.weight' for 2 medusa heads of "
                         "1 layer(s)");
  // Hydra's first block must be (k + 2) d wide.
  const std::string hydra_cfg = R"({"hydra_num_heads": 1, "hydra_num_layers": 1})";
  EXPECT_EQ(
      error_loading(folder("t", hydra_cfg,
                           {{"hydra_head.0.0.linear.weight", {d(), d()}},
                            {"hydra_head.0.0.linear.bias", {d()}}}),
                    Kind::Hydra),
      where + ": tensor 'hydra_head.0.0.linear.weight' has shape [64, 64], expected [64, 128]");
}

}  // namespace
}  // namespace eagle2
