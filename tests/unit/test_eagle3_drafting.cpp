// Drafting with EAGLE-3 heads through the decoding loops: the drafter asks for the head's layers
// (Drafter::feature_layers), the loops capture them in the prefill and in each cycle's verify
// forward (never in an extra target forward), and drafters that want no layers get the final-norm
// states as before. The output equals plain decoding; the names on the stats line tell the kinds
// apart.
#include <gtest/gtest.h>

#include <vector>

#include "draft/eagle_head.h"
#include "speculative/batch_decoder.h"
#include "speculative/eagle_drafter.h"
#include "speculative/feature_capture.h"
#include "speculative/speculative_decoder.h"
#include "support/decoding.h"
#include "support/eagle3_heads.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

// A target deep enough for the default feature layers {2, L/2, L-3} = {2, 3, 4}.
std::unique_ptr<LlamaModel> seven_layers() {
  LlamaConfig c = test::tiny_config();
  c.num_layers = 7;
  return test::load_random_model("eagle3-drafting", c, DType::F32, 3, 0.3f);
}

EagleDrafterOptions dynamic_options(int top_k, int depth, int total) {
  EagleDrafterOptions o;
  o.dynamic = {top_k, depth, total};
  o.context = 256;
  return o;
}

TEST(Eagle3Drafting, TheDrafterAsksForTheHeadsLayersAndSaysItsKind) {
  auto target = seven_layers();
  auto head3 = test::load_random_eagle3_head("drafting-default", *target);
  ASSERT_EQ(head3->kind(), EagleHead::Kind::Eagle3);
  auto head2 = EagleHead::load(test::write_random_head("drafting-e2", *target), *target);
  ThreadPool pool(1);
  EagleDrafter d3(*head3, pool, dynamic_options(4, 3, 16));
  EXPECT_EQ(std::vector<int32_t>(d3.feature_layers().begin(), d3.feature_layers().end()),
            (std::vector<int32_t>{2, 3, 4}));
  EXPECT_EQ(d3.name(), "eagle3-dynamic");
  EagleDrafter d2(*head2, pool, dynamic_options(4, 3, 16));
  EXPECT_TRUE(d2.feature_layers().empty());
  EXPECT_EQ(d2.name(), "eagle2-dynamic");  // unchanged: a contract of the stats line
  EagleDrafterOptions o = dynamic_options(4, 3, 16);
  o.shape = EagleDrafterOptions::Shape::Static;
  EXPECT_EQ(EagleDrafter(*head3, pool, o).name(), "eagle3-static");
  EXPECT_EQ(EagleDrafter(*head2, pool, o).name(), "eagle-static");
  o.shape = EagleDrafterOptions::Shape::Chain;
  EXPECT_EQ(EagleDrafter(*head3, pool, o).name(), "eagle3-chain");
  EXPECT_EQ(EagleDrafter(*head2, pool, o).name(), "eagle-chain");
  EXPECT_TRUE(NoDrafter().feature_layers().empty());
}

// One target forward per cycle: the features of the accepted path come from the verify forward's
// capture, the prompt's from the prefill's.
TEST(Eagle3Drafting, OneTargetForwardPerCycleAndThePlainOutput) {
  auto target = seven_layers();
  auto head3 = test::load_random_eagle3_head("drafting-default", *target);
  ThreadPool pool(2);
  GenerationOptions opt;
  opt.max_new_tokens = 40;
  opt.stop_at_eos = false;
  const std::vector<int32_t> prompt = {1, 7, 9, 4, 22, 5, 17};  // under one prefill chunk
  const std::vector<int32_t> plain = test::plain_tokens(*target, prompt, opt, 256, pool);
  for (int total : {16, 60}) {
    SCOPED_TRACE(total);
    EagleDrafter drafter(*head3, pool,
                         dynamic_options(total == 16 ? 4 : 10, total == 16 ? 3 : 5, total));
    const int64_t before = target->forward_calls();
    SpeculativeStats st;
    EXPECT_EQ(test::speculative_tokens(*target, drafter, prompt, opt, 256, pool, {}, &st), plain);
    EXPECT_GT(st.cycles, 0);
    EXPECT_EQ(target->forward_calls() - before, 1 + st.cycles);  // the prefill, then one per cycle
  }
}

// BatchDecoder: one forward per step whatever the company; the EAGLE-3 sequences' verify rows
// are captured in it and each sequence's tokens are its plain tokens.
TEST(Eagle3Drafting, BatchDecoderSpendsOneForwardPerStep) {
  auto target = seven_layers();
  auto head3 = test::load_random_eagle3_head("drafting-default", *target);
  auto head3b = test::load_random_eagle3_head("drafting-explicit", *target,
                                              {.aux_layers = {6, 0}, .seed = 4});
  auto head2 = EagleHead::load(test::write_random_head("drafting-e2", *target), *target);
  ThreadPool pool(2);
  GenerationOptions opt;
  opt.max_new_tokens = 30;
  opt.stop_at_eos = false;
  opt.prefill_chunk = 4;  // prompts over several steps, next to other sequences' trees
  const std::vector<std::vector<int32_t>> prompts = {
      {1, 7, 9, 4, 22, 5, 17}, {1, 3}, {1, 30, 31, 32, 33, 34, 35, 36, 37}, {1, 8, 8}};
  BatchDecoder decoder(*target, target->make_pool(1024), 256, pool);
  auto eagle = [&](EagleHead& h, EagleDrafterOptions o) {
    return std::make_unique<EagleDrafter>(h, pool, o);
  };
  std::vector<int64_t> ids;
  ids.push_back(decoder.add(prompts[0], opt, eagle(*head3, dynamic_options(4, 3, 16))));
  ids.push_back(decoder.add(prompts[1], opt, eagle(*head2, dynamic_options(4, 3, 16))));
  ids.push_back(decoder.add(prompts[2], opt, eagle(*head3b, dynamic_options(10, 5, 60))));
  ids.push_back(decoder.add(prompts[3], opt, nullptr));
  const int64_t before = target->forward_calls();
  int64_t steps_with_rows = 0;
  for (int64_t live = 1; live > 0;) {
    live = decoder.step();
    steps_with_rows += decoder.last_step().rows > 0;
  }
  EXPECT_EQ(target->forward_calls() - before, steps_with_rows);
  for (size_t j = 0; j < ids.size(); ++j) {
    SCOPED_TRACE(j);
    EXPECT_EQ(decoder.tokens(ids[j]), test::plain_tokens(*target, prompts[j], opt, 256, pool));
    EXPECT_GT(decoder.stats(ids[j]).cycles, 0);
  }
}

TEST(Eagle3Drafting, FeatureRowsPickEachDraftersLayersFromTheUnion) {
  std::vector<int32_t> all;
  add_capture_layers(all, std::vector<int32_t>{2, 6, 9});
  add_capture_layers(all, std::vector<int32_t>{9, 0});
  EXPECT_EQ(all, (std::vector<int32_t>{2, 6, 9, 0}));
  ForwardResult out;
  const int64_t d = 2;
  // Two capture rows of layers {2, 6, 9, 0}: row r, layer slot k holds 100 r + 10 k + i.
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < d; ++i) out.captured.push_back(static_cast<float>(100 * r + 10 * k + i));
  out.hidden = {7, 8, 9, 10, 11, 12};
  const std::vector<int32_t> want = {0, 6};
  FeatureRows rows{.out = &out, .captured_layers = all, .layers = want, .d = d, .capture_base = 1};
  std::vector<float> got;
  rows.append(0, got);
  EXPECT_EQ(got, (std::vector<float>{130, 131, 110, 111}));
  FeatureRows plain{.out = &out, .captured_layers = all, .layers = {}, .d = d, .hidden_base = 1};
  got.clear();
  plain.append(1, got);
  EXPECT_EQ(got, (std::vector<float>{11, 12}));
}

}  // namespace
}  // namespace eagle2
