// The EAGLE-3 trainer (train/eagle3_trainer.h): its draft vocabulary, its export read back by
// EagleHead, train == inference on the exported head, and thread-count invariance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "draft/draft_vocab.h"
#include "draft/eagle_head.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "train/eagle3_trainer.h"

namespace eagle2::train {
namespace {

std::unique_ptr<LlamaModel> target8() {
  LlamaConfig tc = test::tiny_config();
  tc.num_layers = 8;  // {2, 4, 5}: the default layers need at least 7
  return test::load_random_model("e3-trainer", tc);
}

std::vector<HeadSequence> random_data(LlamaModel& target, ThreadPool& pool, int n, int64_t len,
                                      uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_int_distribution<int32_t> tok(3, 95);
  const std::vector<int32_t> layers = eagle3_default_layers(target);
  std::vector<HeadSequence> data;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> t = {1};
    while (static_cast<int64_t>(t.size()) < len) t.push_back(tok(rng));
    data.push_back(record_features(target, t, pool, layers));
    data.back().source = i;
  }
  return data;
}

TEST(Eagle3DraftVocab, TopByCountTiesToLowerIdFilledWithLowestUnusedAscending) {
  // counts: id 5 most, then 2 and 7 tied (2 first), then 1.
  const std::vector<int64_t> counts = {0, 1, 4, 0, 0, 9, 0, 4};
  EXPECT_EQ(eagle3_draft_ids(counts, 2), (std::vector<int32_t>{2, 5}));
  EXPECT_EQ(eagle3_draft_ids(counts, 3), (std::vector<int32_t>{2, 5, 7}));
  // Four occurred; six asked: the lowest unused ids 0 and 3 fill.
  EXPECT_EQ(eagle3_draft_ids(counts, 6), (std::vector<int32_t>{0, 1, 2, 3, 5, 7}));
  EXPECT_THROW(eagle3_draft_ids(counts, 0), Error);
  EXPECT_THROW(eagle3_draft_ids(counts, 9), Error);

  HeadSequence s;
  s.tokens = {3, 5, 5, 5, 2, 7};  // the first token predicts nothing: not counted
  const Eagle3DraftVocab v = eagle3_draft_vocab({s}, 8, 2);
  EXPECT_EQ(v.ids, (std::vector<int32_t>{2, 5}));
  EXPECT_EQ(v.distinct, 3);
  EXPECT_DOUBLE_EQ(v.coverage, 4.0 / 5.0);
}

TEST(Eagle3Trainer, ExportLoadsWithItsDraftMapAndRejectsTooFewSteps) {
  const auto target = target8();
  ThreadPool pool(2);
  const std::vector<int32_t> ids = {0, 3, 4, 10, 50, 95};
  Eagle3Trainer head(*target, ids, Eagle3Init{3, 40, {}, {}});
  EXPECT_EQ(head.feature_layers(), (std::vector<int32_t>{2, 4, 5}));
  // lm_head starts at the target's rows of the kept ids.
  std::vector<float> row(64);
  convert_to_f32(target->lm_head().dtype, target->lm_head().row(50), row.data(), 64);
  EXPECT_TRUE(std::equal(row.begin(), row.end(), head.weights().lm_head.value.begin() + 4 * 64));

  const std::string dir = test::temp_dir("e3-trainer-export");
  head.save(dir, DType::BF16);
  const auto loaded = EagleHead::load(dir, *target);
  EXPECT_EQ(loaded->kind(), EagleHead::Kind::Eagle3);
  EXPECT_EQ(loaded->config().intermediate_size, 40);
  EXPECT_EQ(loaded->config().num_layers, 1);
  ASSERT_EQ(loaded->draft_vocab_size(), 6);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(loaded->draft_token(i), ids[static_cast<size_t>(i)]);
  EXPECT_EQ(std::vector<int32_t>(loaded->feature_layers().begin(), loaded->feature_layers().end()),
            head.feature_layers());

  const std::vector<HeadSequence> data = random_data(*target, pool, 2, 10, 4);
  Eagle3TrainOptions o;
  o.steps = 1;
  o.ttt_steps = 2;
  EXPECT_THROW(train_eagle3(head, data, o, pool), Error);
  // Data without the layers' features is refused, naming what is missing.
  std::vector<HeadSequence> plain = data;
  for (HeadSequence& s : plain) s.aux.clear();
  o.ttt_steps = 3;
  EXPECT_THROW(train_eagle3(head, plain, o, pool), Error);
}

// Chosen feature layers (--feature-layers): the trainer reads them, the export records them in
// config.json and the loader reads them back; ids the target lacks are the loader's error.
TEST(Eagle3Trainer, ChosenFeatureLayersAreExportedAndChecked) {
  const auto target = target8();
  const std::vector<int32_t> ids = {0, 3, 4, 10, 50, 95};
  Eagle3Trainer head(*target, ids, Eagle3Init{3, 0, {1, 3, 7}, {}});
  EXPECT_EQ(head.feature_layers(), (std::vector<int32_t>{1, 3, 7}));
  const std::string dir = test::temp_dir("e3-trainer-layers");
  head.save(dir, DType::BF16);
  const auto loaded = EagleHead::load(dir, *target);
  EXPECT_EQ(std::vector<int32_t>(loaded->feature_layers().begin(), loaded->feature_layers().end()),
            (std::vector<int32_t>{1, 3, 7}));
  EXPECT_EQ(test::error_of([&] {
              Eagle3Trainer(*target, ids, Eagle3Init{3, 0, {1, 3, 8}, {}});
            }),
            "train-head --feature-layers: \"eagle_aux_hidden_state_layer_ids\" names layer 8, but "
            "the target has 8 layers (0 to 7)");
}

// After a few training steps, the exported head run as inference runs it (catch-up rows with fc
// for positions 0..j, then a chain of the ground-truth next tokens, each row seeing its chain
// ancestors) reproduces the trainer's unrolled h_s at row j.
// Trains a few steps with `feature_scale` (Eagle3Init), saves, and checks that the loaded head,
// fed the RAW features, reproduces the trainer's unrolled hidden states within 1e-4.
void expect_export_reproduces_training(const std::vector<float>& feature_scale,
                                       const std::string& name) {
  const auto target = target8();
  ThreadPool pool(2);
  const std::vector<HeadSequence> data = random_data(*target, pool, 3, 14, 9);
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, 96, 48);
  Eagle3Trainer head(*target, v.ids, Eagle3Init{5, 0, {}, feature_scale});
  Eagle3TrainOptions o;
  o.steps = 4;
  o.batch = 2;
  o.seq_len = 6;
  o.ttt_steps = 3;
  o.lr = 1e-2;
  train_eagle3(head, data, o, pool);

  const std::string dir = test::temp_dir(name);
  head.save(dir, DType::F32);
  const auto inf = EagleHead::load(dir, *target);
  inf->upcast_weights();

  const int64_t T = 8, S = 4, d = 64;
  Eagle3Batch batch;
  head.fill(batch, data, {{0, 0}}, T, S, pool);
  const std::vector<float> h = eagle3_unrolled_hidden(
      head.config(), head.weights(),
      Matrix{target->embedding().dtype, 96, d, target->embedding().data}, batch.window(), pool);
  const HeadSequence& s = data[0];
  for (int64_t j : {0, 3, 7}) {
    KvCache kv = inf->make_cache(32);
    std::vector<float> out(static_cast<size_t>((j + 1) * d));
    const std::vector<int32_t> next(s.tokens.begin() + 1, s.tokens.begin() + j + 2);
    inf->forward_causal(s.aux.data(), next, kv, out.data(), pool);
    std::vector<float> cur(out.end() - d, out.end());
    kv.begin_batch(S);
    std::vector<int32_t> visible;
    for (int64_t st = 0; st < S; ++st) {
      if (st > 0) {
        // Step st: token x_{j+1+st} at position j+st in slot j+st, seeing its chain ancestors.
        const std::vector<int32_t> tok = {s.tokens[static_cast<size_t>(j + 1 + st)]};
        const std::vector<int32_t> pos = {static_cast<int32_t>(j + st)};
        const std::vector<int32_t> slot = {static_cast<int32_t>(j + st)};
        visible.push_back(static_cast<int32_t>(j + st));
        const std::vector<int64_t> begin = {0, static_cast<int64_t>(visible.size())};
        std::vector<float> next_h(static_cast<size_t>(d));
        inf->forward({cur.data(), tok, pos, slot, visible, begin}, kv, next_h.data(), pool);
        cur = next_h;
      }
      double worst = 0;
      for (int64_t c = 0; c < d; ++c) {
        const double want = h[static_cast<size_t>((st * T + j) * d + c)];
        worst =
            std::max(worst, std::abs(cur[static_cast<size_t>(c)] - want) / (1.0 + std::abs(want)));
      }
      EXPECT_LT(worst, 1e-4) << "row " << j << " step " << st;
    }
  }
}

TEST(Eagle3Trainer, ExportedHeadReproducesTheUnrolledTrainingForward) {
  expect_export_reproduces_training({}, "e3-trainer-tti");
}

// The scale multiplies the trainer's copy of each layer's features; the export folds it into fc's
// columns. A scale left out of the export (or applied to the wrong layer) misses by far more.
TEST(Eagle3Trainer, FeatureScaleIsFoldedIntoTheExportedFc) {
  expect_export_reproduces_training({0.5f, 2.0f, 0.125f}, "e3-trainer-tti-scaled");
}

TEST(Eagle3Trainer, FeatureScaleIsEachLayersInverseRmsAndIsChecked) {
  const auto target = target8();
  ThreadPool pool(2);
  const std::vector<HeadSequence> data = random_data(*target, pool, 3, 14, 9);
  const std::vector<float> k = eagle3_feature_scale(data, 3, 64);
  ASSERT_EQ(k.size(), 3u);
  for (int64_t g = 0; g < 3; ++g) {
    double sum = 0;
    int64_t n = 0;
    for (const HeadSequence& s : data)
      for (size_t r = 0; r < s.aux.size() / 192; ++r)
        for (int64_t i = 0; i < 64; ++i, ++n) {
          const double x =
              s.aux[r * 192 + static_cast<size_t>(g * 64 + i)] * k[static_cast<size_t>(g)];
          sum += x * x;
        }
    EXPECT_NEAR(std::sqrt(sum / static_cast<double>(n)), 1.0, 1e-5) << "layer " << g;
  }
  // The residual stream grows with depth: the scales differ per layer.
  EXPECT_NE(k[0], k[2]);
  std::vector<HeadSequence> zero = data;
  for (HeadSequence& s : zero) std::fill(s.aux.begin(), s.aux.end(), 0.0f);
  EXPECT_EQ(eagle3_feature_scale(zero, 3, 64), std::vector<float>(3, 1.0f));
  EXPECT_EQ(test::error_of([&] { eagle3_feature_scale(data, 5, 64); }),
            "eagle3 feature scale: a sequence's features are not rows of 5 x 64");
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, 96, 48);
  EXPECT_EQ(test::error_of([&] {
              Eagle3Trainer(*target, v.ids, Eagle3Init{5, 0, {}, {1.0f, 2.0f}});
            }),
            "train-head --arch eagle3: 2 feature scales for 3 feature layers");
  EXPECT_EQ(test::error_of([&] {
              Eagle3Trainer(*target, v.ids, Eagle3Init{5, 0, {}, {1.0f, 0.0f, 1.0f}});
            }),
            "train-head --arch eagle3: a feature scale is not a positive number");
}

// The teacher of each counted offset: softmax over the draft ids of the target's logits there
// (lm_head of the final-norm state), divided by the teacher temperature; 0 gives one-hot on the
// restricted argmax. An offset counts when the target's FULL-vocabulary argmax is a draft id.
TEST(Eagle3Trainer, TeacherIsTheRestrictedSoftmaxAtItsTemperature) {
  const auto target = target8();
  ThreadPool pool(2);
  const std::vector<HeadSequence> data = random_data(*target, pool, 2, 16, 3);
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, 96, 40);
  const int64_t T = 6, S = 3, span = T + S, Vd = 40, d = 64;
  std::vector<std::vector<float>> lm(96, std::vector<float>(d));
  for (int32_t id = 0; id < 96; ++id)
    convert_to_f32(target->lm_head().dtype, target->lm_head().row(id),
                   lm[static_cast<size_t>(id)].data(), d);
  int64_t counted_rows = 0;
  // 1e-40 (a denormal whose inverse overflows) must be the one-hot limit, not NaN.
  for (const float temp : {1.0f, 0.5f, 0.0f, 1e-40f}) {
    Eagle3Trainer head(*target, v.ids, Eagle3Init{5, 0, {}, {}, temp});
    Eagle3Batch b;
    head.fill(b, data, {{0, 0}, {1, 4}}, T, S, pool);
    for (int64_t w = 0; w < 2; ++w)
      for (int64_t p = 1; p < span; ++p) {
        const HeadSequence& s = data[static_cast<size_t>(w)];
        const int64_t j = (w == 0 ? 0 : 4) + p;
        const uint8_t counted = b.counted[static_cast<size_t>(w * span + p)];
        const float* got = &b.teacher[static_cast<size_t>((w * span + p) * Vd)];
        std::vector<double> logit(96);
        for (int32_t id = 0; id < 96; ++id)
          for (int64_t c = 0; c < d; ++c)
            logit[static_cast<size_t>(id)] +=
                static_cast<double>(s.features[static_cast<size_t>(j * d + c)]) *
                lm[static_cast<size_t>(id)][static_cast<size_t>(c)];
        const auto full_argmax =
            static_cast<int32_t>(std::max_element(logit.begin(), logit.end()) - logit.begin());
        EXPECT_EQ(counted, std::binary_search(v.ids.begin(), v.ids.end(), full_argmax) ? 1 : 0);
        if (!counted) continue;
        counted_rows += temp == 1.0f;
        std::vector<double> want(static_cast<size_t>(Vd));
        size_t best = 0;
        for (size_t i = 0; i < want.size(); ++i)
          if (logit[static_cast<size_t>(v.ids[i])] > logit[static_cast<size_t>(v.ids[best])])
            best = i;
        double sum = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          const double z =
              logit[static_cast<size_t>(v.ids[i])] - logit[static_cast<size_t>(v.ids[best])];
          want[i] = temp < 1e-30f ? (i == best ? 1.0 : 0.0) : std::exp(z / temp);
          sum += want[i];
        }
        for (size_t i = 0; i < want.size(); ++i)
          EXPECT_NEAR(got[i], want[i] / sum, 1e-5) << "temperature " << temp << " row " << p;
      }
  }
  EXPECT_GT(counted_rows, 4);
  for (const float bad : {-0.5f, std::nanf("")})
    EXPECT_EQ(test::error_of([&] {
                Eagle3Trainer(*target, v.ids, Eagle3Init{5, 0, {}, {}, bad});
              }).substr(0, 63),
              "train-head --arch eagle3: the teacher temperature must be a num");
}

// A few steps of 2 windows x 5 positions, 3 unrolled steps.
Eagle3TrainOptions tiny_options(int64_t steps) {
  Eagle3TrainOptions o;
  o.steps = steps;
  o.batch = 2;
  o.seq_len = 5;
  o.ttt_steps = 3;
  return o;
}

TEST(Eagle3Trainer, TrainingIsThreadCountInvariant) {
  const auto target = target8();
  ThreadPool pool1(1), pool3(3);
  const std::vector<HeadSequence> data = random_data(*target, pool1, 3, 12, 2);
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, 96, 32);
  const Eagle3TrainOptions o = tiny_options(3);
  Eagle3Trainer a(*target, v.ids, Eagle3Init{}), b(*target, v.ids, Eagle3Init{});
  const Eagle3TrainResult ra = train_eagle3(a, data, o, pool1);
  const Eagle3TrainResult rb = train_eagle3(b, data, o, pool3);
  EXPECT_EQ(ra.last.total, rb.last.total);
  for (size_t i = 0; i < a.params().size(); ++i)
    EXPECT_EQ(a.params()[i]->value, b.params()[i]->value) << a.params()[i]->name;
}

// The schedule of short and full optimizer steps: the warmup is short, after it every K-th step
// counted back from the last is full, and the last 10 % are full whatever K says.
TEST(Eagle3Trainer, UnrolledStepsFollowTheSchedule) {
  Eagle3TrainOptions o;
  o.steps = 20;  // the last 10 %: steps 18 and 19
  o.ttt_steps = 7;
  o.ttt_short_steps = 3;
  o.ttt_warmup = 5;
  o.ttt_full_every = 4;
  std::vector<int64_t> got;
  for (int64_t s = 0; s < o.steps; ++s) got.push_back(ttt_unrolled_at(o, s));
  EXPECT_EQ(got,
            (std::vector<int64_t>{3, 3, 3, 3, 3, 3, 3, 7, 3, 3, 3, 7, 3, 3, 3, 7, 3, 3, 7, 7}));
  o.ttt_full_every = 1;  // the default: every step after the warmup is full
  o.ttt_short_steps = 1;
  for (int64_t s = 0; s < o.steps; ++s) EXPECT_EQ(ttt_unrolled_at(o, s), s < 5 ? 1 : 7) << s;
}

// Short steps of 2 and a full step every 2nd: the progress reports each step's depth, and
// out-of-range short depths and periods are refused.
TEST(Eagle3Trainer, ShortAndFullStepsInterleave) {
  const auto target = target8();
  ThreadPool pool(2);
  const std::vector<HeadSequence> data = random_data(*target, pool, 3, 12, 2);
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, 96, 32);
  Eagle3TrainOptions o = tiny_options(5);
  o.ttt_short_steps = 2;
  o.ttt_full_every = 2;
  std::vector<size_t> unrolled;
  Eagle3Trainer a(*target, v.ids, Eagle3Init{});
  train_eagle3(a, data, o, pool,
               [&](const Eagle3TrainProgress& p) { unrolled.push_back(p.stats.loss.size()); });
  EXPECT_EQ(unrolled, (std::vector<size_t>{3, 2, 3, 2, 3}));
  Eagle3Trainer b(*target, v.ids, Eagle3Init{});
  o.ttt_short_steps = 4;  // more than ttt_steps (3)
  EXPECT_THROW(train_eagle3(b, data, o, pool), Error);
  o.ttt_short_steps = 0;
  EXPECT_THROW(train_eagle3(b, data, o, pool), Error);
  o.ttt_short_steps = 2;
  o.ttt_full_every = 0;
  EXPECT_THROW(train_eagle3(b, data, o, pool), Error);
}

// --ttt-warmup: the first steps unroll one step (their stats have one entry), the tail all S;
// out-of-range warmups and bad state weights are refused. The state term changes the training.
TEST(Eagle3Trainer, CurriculumAndStateTermOptions) {
  const auto target = target8();
  ThreadPool pool(2);
  const std::vector<HeadSequence> data = random_data(*target, pool, 3, 12, 2);
  const Eagle3DraftVocab v = eagle3_draft_vocab(data, 96, 32);
  Eagle3TrainOptions o = tiny_options(4);
  o.ttt_warmup = 3;
  std::vector<size_t> unrolled;
  Eagle3Trainer a(*target, v.ids, Eagle3Init{});
  const Eagle3TrainResult r = train_eagle3(a, data, o, pool, [&](const Eagle3TrainProgress& p) {
    unrolled.push_back(p.stats.loss.size());
  });
  EXPECT_EQ(unrolled, (std::vector<size_t>{1, 1, 1, 3}));
  EXPECT_EQ(r.first.loss.size(), 1u);
  EXPECT_EQ(r.last.loss.size(), 3u);

  // The bound the CLI checks too: all but the last 10 % of the steps, at least the last one.
  EXPECT_EQ(max_ttt_warmup(4), 3);
  EXPECT_EQ(max_ttt_warmup(25), 23);
  EXPECT_EQ(max_ttt_warmup(100), 90);
  o.ttt_warmup = 4;  // would leave the tail (the last 10 %, here 1 step) without unrolling
  Eagle3Trainer b(*target, v.ids, Eagle3Init{});
  EXPECT_THROW(train_eagle3(b, data, o, pool), Error);
  o.ttt_warmup = 0;
  o.state_weight = -1;
  EXPECT_THROW(train_eagle3(b, data, o, pool), Error);

  Eagle3Trainer plain(*target, v.ids, Eagle3Init{}), with_state(*target, v.ids, Eagle3Init{});
  o.state_weight = 0;
  const Eagle3TrainResult rp = train_eagle3(plain, data, o, pool);
  o.state_weight = 1;
  const Eagle3TrainResult rs = train_eagle3(with_state, data, o, pool);
  EXPECT_GT(rs.first.total, rp.first.total);  // the same first forward plus a positive term
  EXPECT_NE(plain.weights().fc.value, with_state.weights().fc.value);
  // The state term is reported per unrolled step, before its weight: the totals differ by it.
  ASSERT_EQ(rs.first.state.size(), 3u);
  EXPECT_EQ(rp.first.state, std::vector<double>(3, 0.0));
  double weighted = 0;
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_GT(rs.first.state[k], 0.0) << k;
    weighted += std::pow(0.8, static_cast<double>(k)) * rs.first.state[k];
  }
  EXPECT_NEAR(rs.first.total - rp.first.total, weighted, 1e-5 * rs.first.total);
  ASSERT_EQ(rs.last.state.size(), 3u);
  EXPECT_GT(rs.last.state[0], 0.0);
}

}  // namespace
}  // namespace eagle2::train
