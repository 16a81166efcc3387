// EAGLE-3 heads that do not fit their target or contradict themselves: one clear Error each,
// naming the tensor or config field. Each case corrupts one thing of a random head
// (support/eagle3_heads.h) that loads when left alone.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "draft/eagle_head.h"
#include "speculative/eagle_drafter.h"
#include "support/eagle3_heads.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using test::error_of;
using test::HeadFiles;

// An 8-layer target: the default feature layers {2, 4, 5} exist and are distinct.
class Eagle3Hostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    target_ = test::load_random_model("e3-hostile-8", test::deep_tiny_config()).release();
    shallow_ = test::load_random_model("e3-hostile-2", test::tiny_config()).release();
  }
  static void TearDownTestSuite() {
    delete target_;
    delete shallow_;
  }

  // The Error of loading `files` (written to a folder of its own) against `target`; a failure if
  // it loads. `*dir` is set to the folder.
  std::string load_error(const HeadFiles& files, const LlamaModel& target, std::string* dir) {
    *dir = test::write_head_folder("hostile-" + std::to_string(case_++), files);
    return error_of([&] { EagleHead::load(*dir, target); });
  }
  // The error after `edit` on a fresh random head (48 of the 96 tokens drafted).
  std::string error_after(const std::function<void(HeadFiles&)>& edit, std::string* dir) {
    HeadFiles f = test::random_eagle3_head(*target_, {.draft_vocab = 48});
    edit(f);
    return load_error(f, *target_, dir);
  }

  static LlamaModel* target_;
  static LlamaModel* shallow_;
  int case_ = 0;
};
LlamaModel* Eagle3Hostile::target_ = nullptr;
LlamaModel* Eagle3Hostile::shallow_ = nullptr;

TEST_F(Eagle3Hostile, UntouchedHeadLoads) {
  const std::string dir =
      test::write_head_folder("clean", test::random_eagle3_head(*target_, {.draft_vocab = 48}));
  const auto head = EagleHead::load(dir, *target_);
  EXPECT_EQ(head->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(head->draft_vocab_size(), 48);
}

TEST_F(Eagle3Hostile, DraftToTargetMap) {
  std::string dir;
  std::string e = error_after([](HeadFiles& f) { f.find("d2t")->i64()[3] = 96; }, &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'd2t' maps draft id 3 (offset 96) to a token "
                   "outside the target's vocabulary [0, 96)");
  e = error_after([](HeadFiles& f) { f.find("d2t")->i64()[0] = -1; }, &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'd2t' maps draft id 0 (offset -1) to a token "
                   "outside the target's vocabulary [0, 96)");
  // An offset that would overflow int64 when added is still "outside", not wrapped.
  e = error_after([](HeadFiles& f) { f.find("d2t")->i64()[5] = INT64_MAX; }, &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 'd2t' maps draft id 5 (offset " +
                   std::to_string(INT64_MAX) +
                   ") to a token outside the target's vocabulary [0, 96)");
  int64_t token = 0;
  e = error_after(
      [&](HeadFiles& f) {
        int64_t* d2t = f.find("d2t")->i64();
        d2t[1] = d2t[0] - 1;  // draft id 1 -> the token of draft id 0
        token = d2t[0];
      },
      &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 'd2t' maps draft ids 0 and 1 to the same token " +
                   std::to_string(token));
  e = error_after(
      [](HeadFiles& f) {
        test::HeadTensor& d2t = *f.find("d2t");
        d2t.shape = {47};
        d2t.bytes.resize(47 * 8);
      },
      &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 'd2t' has shape [47], but draft_vocab_size is 48");
  e = error_after(
      [](HeadFiles& f) {
        test::HeadTensor& d2t = *f.find("d2t");
        d2t.dtype = DType::F32;
        d2t.shape = {48, 2};  // the same bytes as floats
      },
      &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 'd2t' has dtype F32, expected I64");
  e = error_after([](HeadFiles& f) { f.remove("d2t"); }, &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'd2t' not found (draft_vocab_size 48 < "
                   "vocab_size 96 needs the draft -> target map)");
}

TEST_F(Eagle3Hostile, TargetToDraftFlags) {
  std::string dir;
  int64_t unmapped = -1, mapped = -1;
  auto pick = [&](HeadFiles& f) {
    const std::vector<unsigned char>& flags = f.find("t2d")->bytes;
    for (int64_t id = 0; id < 96; ++id) (flags[static_cast<size_t>(id)] ? mapped : unmapped) = id;
  };
  std::string e = error_after(
      [&](HeadFiles& f) {
        pick(f);
        f.find("t2d")->bytes[static_cast<size_t>(unmapped)] = 1;
      },
      &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 't2d' disagrees with d2t at token " +
                   std::to_string(unmapped) + " (t2d: true; d2t maps no draft id to it)");
  e = error_after(
      [&](HeadFiles& f) {
        pick(f);
        f.find("t2d")->bytes[static_cast<size_t>(mapped)] = 0;
      },
      &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 't2d' disagrees with d2t at token " +
                   std::to_string(mapped) + " (t2d: false; d2t maps a draft id to it)");
  e = error_after([](HeadFiles& f) { f.find("t2d")->bytes[7] = 2; }, &dir);
  EXPECT_EQ(e, dir + "/model.safetensors: tensor 't2d' holds byte 2 at token 7, not a bool");
  e = error_after(
      [](HeadFiles& f) {
        f.find("t2d")->shape = {48};
        f.find("t2d")->bytes.resize(48);
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 't2d' has shape [48], expected [96] (the target's "
                   "vocabulary)");
  // t2d is optional: the map is d2t's.
  HeadFiles f = test::random_eagle3_head(*target_, {.draft_vocab = 48});
  f.remove("t2d");
  EXPECT_NO_THROW(EagleHead::load(test::write_head_folder("no-t2d", f), *target_));
}

TEST_F(Eagle3Hostile, WidthsAndDraftVocabulary) {
  std::string dir;
  std::string e = error_after(
      [](HeadFiles& f) {
        test::HeadTensor& fc = *f.find("fc.weight");
        fc.shape = {64, 128};  // an EAGLE-2 fc's width: two features
        fc.bytes.resize(64 * 128 * 4);
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'fc.weight' has shape [64, 128], expected [64, "
                   "192] (3 target layers' features of the target's hidden size 64)");
  e = error_after([](HeadFiles& f) { f.config["target_hidden_size"] = 32; }, &dir);
  EXPECT_EQ(e, dir +
                   "/config.json: draft head \"target_hidden_size\" 32 does not match the "
                   "target's hidden_size 64");
  e = error_after(
      [](HeadFiles& f) {
        test::HeadTensor& lm = *f.find("lm_head.weight");
        lm.shape = {47, 64};
        lm.bytes.resize(47 * 64 * 4);
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'lm_head.weight' has 47 rows, but "
                   "draft_vocab_size is 48");
  e = error_after([](HeadFiles& f) { f.config["draft_vocab_size"] = 97; }, &dir);
  EXPECT_EQ(e, dir + "/config.json: \"draft_vocab_size\" (97) must be in [1, vocab_size 96]");
  e = error_after(
      [](HeadFiles& f) {
        test::HeadTensor& q = *f.find("midlayer.self_attn.q_proj.weight");
        q.shape = {64, 64};  // reads the stream alone, not [embedding | hidden]
        q.bytes.resize(64 * 64 * 4);
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'midlayer.self_attn.q_proj.weight' has shape "
                   "[64, 64], expected [64, 128]");
  e = error_after([](HeadFiles& f) { f.config["hidden_size"] = 128; }, &dir);
  EXPECT_EQ(e, dir + "/config.json: draft head hidden_size 128 does not match the target's 64");
}

TEST_F(Eagle3Hostile, FeatureLayers) {
  std::string dir;
  std::string e = error_after(
      [](HeadFiles& f) {
        f.config["eagle_aux_hidden_state_layer_ids"] = {2, 4, 8};
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/config.json: \"eagle_aux_hidden_state_layer_ids\" names layer 8, but the "
                   "target has 8 layers (0 to 7)");
  e = error_after(
      [](HeadFiles& f) {
        f.config["eagle_aux_hidden_state_layer_ids"] = {-1, 4, 6};
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/config.json: \"eagle_aux_hidden_state_layer_ids\" names layer -1, but the "
                   "target has 8 layers (0 to 7)");
  e = error_after(
      [](HeadFiles& f) {
        f.config["eagle_aux_hidden_state_layer_ids"] = {2, 4, 4};
      },
      &dir);
  EXPECT_EQ(e, dir + "/config.json: \"eagle_aux_hidden_state_layer_ids\" names layer 4 twice");
  e = error_after([](HeadFiles& f) { f.config["eagle_aux_hidden_state_layer_ids"] = "2,4,6"; },
                  &dir);
  EXPECT_EQ(e, dir +
                   "/config.json: \"eagle_aux_hidden_state_layer_ids\" must be a non-empty list "
                   "of layer indices");
  // The default {2, L/2, L-3} on a 2-layer target: not three layers it has.
  HeadFiles f = test::random_eagle3_head(*shallow_, {.draft_vocab = 48});
  e = load_error(f, *shallow_, &dir);
  EXPECT_EQ(e, dir +
                   "/config.json: no \"eagle_aux_hidden_state_layer_ids\": the default layers "
                   "{2, L/2, L-3} need a target of at least 7 layers to be distinct (the target "
                   "has 2)");
  // Explicit layers fit it, in the order given (the concatenation order).
  f = test::random_eagle3_head(*shallow_, {.draft_vocab = 48, .aux_layers = {1, 0}});
  const auto head = EagleHead::load(test::write_head_folder("shallow", f), *shallow_);
  EXPECT_EQ(std::vector<int32_t>(head->feature_layers().begin(), head->feature_layers().end()),
            (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(head->feature_width(), 2 * 64);
}

TEST_F(Eagle3Hostile, MissingAndLeftoverTensors) {
  std::string dir;
  for (const char* name :
       {"midlayer.hidden_norm.weight", "midlayer.input_layernorm.weight", "norm.weight",
        "lm_head.weight", "fc.weight", "midlayer.mlp.down_proj.weight"}) {
    const std::string e = error_after([&](HeadFiles& f) { f.remove(name); }, &dir);
    EXPECT_EQ(e, dir + "/model.safetensors: tensor '" + std::string(name) + "' not found");
  }
  for (const char* name : {"fc.bias", "layers.0.self_attn.q_proj.weight", "midlayer.extra"}) {
    const std::string e = error_after(
        [&](HeadFiles& f) {
          f.tensors.push_back({name, DType::F32, {64}, std::vector<unsigned char>(64 * 4)});
        },
        &dir);
    EXPECT_EQ(e, dir + "/model.safetensors: unexpected tensor '" + std::string(name) +
                     "' for an EAGLE-3 head");
  }
  // The embedding copy some exporters keep must be the target's shape.
  const std::string e = error_after(
      [](HeadFiles& f) {
        f.tensors.push_back(
            {"embed_tokens.weight", DType::F32, {95, 64}, std::vector<unsigned char>(95 * 64 * 4)});
      },
      &dir);
  EXPECT_EQ(e, dir +
                   "/model.safetensors: tensor 'embed_tokens.weight' has shape [95, 64], but "
                   "the target's embedding is [96, 64]");
}

TEST_F(Eagle3Hostile, ConfigVariantsThatChangeTheMath) {
  std::string dir;
  const std::string e =
      error_after([](HeadFiles& f) { f.config["norm_before_residual"] = true; }, &dir);
  EXPECT_EQ(e, dir +
                   "/config.json: \"norm_before_residual\": true (an EAGLE-3 variant whose "
                   "residual is the normed hidden state) is not supported");
  HeadFiles f = test::random_eagle3_head(*target_, {.draft_vocab = 48});
  f.config["norm_before_residual"] = false;
  EXPECT_NO_THROW(EagleHead::load(test::write_head_folder("nbr-false", f), *target_));
}

// Its own draft vocabulary: --draft-vocab (restrict_vocab) is refused; a drafter's top-k wider
// than that vocabulary too.
TEST_F(Eagle3Hostile, DraftVocabIsRefused) {
  const std::string dir =
      test::write_head_folder("vocab", test::random_eagle3_head(*target_, {.draft_vocab = 48}));
  const auto head = EagleHead::load(dir, *target_);
  const std::string why =
      "--draft-vocab: this is an EAGLE-3 head with its own draft vocabulary of 48 tokens "
      "(draft_vocab_size); --draft-vocab applies to EAGLE-1/2 heads";
  EXPECT_EQ(error_of([&] { head->restrict_vocab({1, 2, 3}); }), why);
  EXPECT_EQ(error_of([&] { head->restrict_vocab({}); }), why);
  EXPECT_EQ(error_of([&] { head->require_restrictable(); }), why);
  EXPECT_EQ(head->draft_vocab_size(), 48);
  ThreadPool pool(1);
  EagleDrafterOptions o;
  o.context = 64;
  o.dynamic.top_k = 49;
  EXPECT_EQ(error_of([&] { EagleDrafter drafter(*head, pool, o); }),
            "--draft-top-k must be in [1, 48] (the draft vocabulary; got 49)");
}

}  // namespace
}  // namespace eagle2
