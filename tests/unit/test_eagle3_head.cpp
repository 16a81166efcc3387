// Loading EAGLE-3 heads: the reference head of ../shared (safetensors and pytorch_model.bin, the
// same tensors bit for bit, with their int64 d2t and bool t2d), how the kind is detected (EAGLE-1/2
// heads load as before), and what quantize_weights and upcast_weights cover.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "draft/eagle_head.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "support/eagle3_heads.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using test::error_of;

// Head rows from random features: out [n, d] after a catch-up of n rows.
std::vector<float> catch_up(EagleHead& head, int64_t n, uint32_t seed, ThreadPool& pool) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> features(static_cast<size_t>(n * head.feature_width()));
  for (float& v : features) v = normal(rng);
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int32_t& t : tokens) t = static_cast<int32_t>(rng() % head.config().vocab_size);
  KvCache kv = head.make_cache(n);
  std::vector<float> out(static_cast<size_t>(n * head.config().hidden_size));
  head.forward_causal(features.data(), tokens, kv, out.data(), pool);
  return out;
}

TEST(Eagle3Head, ReferenceHeadLoadsFromBothFormats) {
  EAGLE2_SHARED_FILE(st_path, "data/models/code-lm-eagle3-ref/model.safetensors");
  EAGLE2_SHARED_FILE(bin_path, "data/models/code-lm-eagle3-ref/pytorch_model.bin");
  const std::string dir = st_path.substr(0, st_path.rfind('/'));
  // The readers: the same names, dtypes, shapes and bytes.
  SafetensorsFile st(st_path);
  TorchCheckpoint bin(bin_path);
  ASSERT_EQ(st.tensors().size(), 15u);
  ASSERT_EQ(bin.tensors().size(), st.tensors().size());
  for (const auto& [name, a] : st.tensors()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(bin.tensors().count(name));
    const TensorView& b = bin.tensors().at(name);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.shape, b.shape);
    ASSERT_EQ(a.nbytes(), b.nbytes());
    EXPECT_EQ(std::memcmp(a.data, b.data, a.nbytes()), 0);
  }
  EXPECT_EQ(st.tensors().at("d2t").dtype, DType::I64);
  EXPECT_EQ(st.tensors().at("d2t").shape, (std::vector<int64_t>{1024}));
  EXPECT_EQ(st.tensors().at("t2d").dtype, DType::BOOL);
  EXPECT_EQ(st.tensors().at("t2d").shape, (std::vector<int64_t>{4096}));

  // The head, from either file, on the bundled target it was trained for.
  const auto target = LlamaModel::load(std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm");
  auto a = EagleHead::load_files(dir + "/config.json", st_path, *target);
  auto b = EagleHead::load_files(dir + "/config.json", bin_path, *target);
  for (const EagleHead* h : {a.get(), b.get()}) {
    EXPECT_EQ(h->kind(), EagleHead::Kind::Eagle3);
    EXPECT_EQ(std::vector<int32_t>(h->feature_layers().begin(), h->feature_layers().end()),
              (std::vector<int32_t>{2, 6, 9}));  // {2, L/2, L-3} of the target's 12 layers
    EXPECT_EQ(h->feature_width(), 3 * 512);
    EXPECT_EQ(h->draft_vocab_size(), 1024);
    EXPECT_EQ(h->config().intermediate_size, 256);  // the head's own, not the target's 768
    EXPECT_FALSE(h->has_fc_bias());
    EXPECT_EQ(h->weights_dtype(), "BF16");
  }
  // fc, q/k/v/o, MLP, 4 norms, lm_head: no embedding, no d2t/t2d.
  EXPECT_EQ(a->parameter_count(), 512 * 1536 + 512 * 1024 + 2 * 256 * 1024 + 512 * 512 +
                                      3 * 256 * 512 + 4 * 512 + 1024 * 512);
  EXPECT_EQ(b->parameter_count(), a->parameter_count());
  for (int64_t j = 0; j < 1024; ++j) {
    ASSERT_EQ(a->draft_token(j), b->draft_token(j));
    if (j > 0) {
      ASSERT_GT(a->draft_token(j), a->draft_token(j - 1));  // scandata sorts the ids
    }
  }
  EXPECT_EQ(a->draft_token(1023), 3935);
  ThreadPool pool(2);
  EXPECT_EQ(catch_up(*a, 3, 1, pool), catch_up(*b, 3, 1, pool));
}

// EAGLE-3 when config.json says so, when the weights hold d2t, or when fc reads three target
// widths; anything else is the EAGLE-1/2 head it always was.
TEST(Eagle3Head, KindDetection) {
  const auto target = test::load_random_model("e3-kind", test::deep_tiny_config());
  // A full draft vocabulary (96 ids: d2t all zeros), so the config needs no draft_vocab_size.
  auto plain_config = [](test::HeadFiles& f) {
    f.config["architectures"] = {"LlamaForCausalLM"};
    f.config.erase("draft_vocab_size");
  };
  test::HeadFiles by_d2t = test::random_eagle3_head(*target, {.draft_vocab = 96});
  plain_config(by_d2t);
  auto head = EagleHead::load(test::write_head_folder("by-d2t", by_d2t), *target);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(head->draft_vocab_size(), 96);

  test::HeadFiles by_fc = by_d2t;
  by_fc.remove("d2t");
  by_fc.remove("t2d");
  head = EagleHead::load(test::write_head_folder("by-fc", by_fc), *target);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(head->draft_token(17), 17);  // no map: draft ids are target ids

  test::HeadFiles by_config = test::random_eagle3_head(*target, {.draft_vocab = 96});
  by_config.remove("d2t");
  by_config.remove("t2d");
  by_config.config["architectures"] = {"LlamaForCausalLM"};  // draft_vocab_size alone says it
  head = EagleHead::load(test::write_head_folder("by-config", by_config), *target);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle3);

  // The EAGLE-2 head: kind, final-norm features of the target's width, the target's lm_head.
  head = EagleHead::load(test::write_random_head("e3-kind-eagle2", *target), *target);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle);
  EXPECT_EQ(head->feature_width(), 64);
  EXPECT_TRUE(head->feature_layers().empty());
  EXPECT_EQ(head->draft_vocab_size(), 96);
  EXPECT_TRUE(head->has_fc_bias());
  ThreadPool pool(1);
  std::vector<float> x(64 * 2);
  EXPECT_EQ(error_of([&] { head->fc_forward(x.data(), 1, x.data() + 64, pool); }),
            "draft head: fc_forward is for EAGLE-3 heads (an EAGLE-1/2 fc also reads the "
            "embedding)");
}

// quantize_weights covers the EAGLE-3 head's own lm_head too: its draft log-probs (norm, then
// lm_head) change, a little.
TEST(Eagle3Head, QuantizeWeightsCoversTheOwnLmHead) {
  const auto target = test::load_random_model("e3-quant", test::deep_tiny_config());
  const auto head = EagleHead::load(
      test::write_head_folder("quant", test::random_eagle3_head(*target, {.draft_vocab = 64})),
      *target);
  ThreadPool pool(1);
  std::vector<float> h(64);
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : h) v = normal(rng);
  std::vector<float> before(64), after(64);
  head->draft_logprobs(h.data(), 1, before.data(), pool);
  head->quantize_weights(DType::Q8_0);
  EXPECT_EQ(head->weights_dtype(), "Q8_0");
  head->draft_logprobs(h.data(), 1, after.data(), pool);
  double diff = 0;
  for (size_t i = 0; i < before.size(); ++i)
    diff = std::max(diff, static_cast<double>(std::abs(before[i] - after[i])));
  EXPECT_GT(diff, 0.0) << "the lm_head was not quantized";
  EXPECT_LT(diff, 0.1);
}

// upcast_weights: a BF16 head then runs exactly as the F32 head holding the same (bf16) values,
// which it does not before (bf16 weights round the activations to bf16).
TEST(Eagle3Head, UpcastWeightsRunsAsTheF32Copy) {
  const auto target = test::load_random_model("e3-upcast", test::deep_tiny_config());
  test::HeadFiles bf = test::random_eagle3_head(*target, {.draft_vocab = 64});
  test::HeadFiles f32 = bf;
  test::round_to_bf16(bf, true);
  test::round_to_bf16(f32, false);
  const auto a = EagleHead::load(test::write_head_folder("upcast-bf16", bf), *target);
  const auto b = EagleHead::load(test::write_head_folder("upcast-f32", f32), *target);
  EXPECT_EQ(a->weights_dtype(), "BF16");
  ThreadPool pool(2);
  const std::vector<float> want = catch_up(*b, 4, 2, pool);
  EXPECT_NE(catch_up(*a, 4, 2, pool), want);
  a->upcast_weights();
  EXPECT_EQ(a->weights_dtype(), "F32");
  const std::vector<float> got = catch_up(*a, 4, 2, pool);
  EXPECT_EQ(got, want);
  std::vector<float> lpa(2 * 64), lpb(2 * 64);
  a->draft_logprobs(got.data(), 2, lpa.data(), pool);
  b->draft_logprobs(want.data(), 2, lpb.data(), pool);
  EXPECT_EQ(lpa, lpb);
  // An EAGLE-1/2 head upcasts its fc and layer the same way (its lm_head is the target's).
  const auto e2 = EagleHead::load(test::write_random_head("e3-upcast-eagle2", *target), *target);
  e2->upcast_weights();
  EXPECT_EQ(e2->weights_dtype(), "F32");
}

}  // namespace
}  // namespace eagle2
