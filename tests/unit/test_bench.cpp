// The benchmark harness itself: prompt-set parsing, the greedy equality check, the metrics.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench/bench_runner.h"
#include "bench/prompt_set.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "speculative/eagle_drafter.h"
#include "speculative/speculative_decoder.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/shared_data.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

using test::error_of;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = test::temp_dir("bench") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// stories260K with its EAGLE head and tokenizer from ../shared (callers check it is there).
struct Stories {
  std::string models = test::shared_dir() + "/data/models/";
  std::unique_ptr<LlamaModel> model = LlamaModel::load(models + "stories260K-hf");
  std::unique_ptr<EagleHead> head = EagleHead::load(models + "stories260K-eagle-head", *model);
  std::unique_ptr<Tokenizer> tok = Tokenizer::load(models + "stories260K-hf/tokenizer.model");
};

TEST(PromptSet, JsonlShapes) {
  const std::string path = write("mixed.jsonl",
                                 "{\"turns\": [\"first turn\", \"second\"]}\n"
                                 "\n"
                                 "{\"prompt\": \"def f():\"}\n"
                                 "{\"question\": \"2+2?\", \"answer\": \"4\"}\n"
                                 "{\"text\": \"plain\"}\n");
  const auto p = load_prompt_set(path, {});
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].text, "first turn");
  EXPECT_EQ(p[1].text, "def f():");
  EXPECT_EQ(p[2].text, "2+2?");
  EXPECT_EQ(p[3].text, "plain");
  EXPECT_EQ(p[0].id, "mixed:0");
  EXPECT_EQ(load_prompt_set(path, {2, 0, false}).size(), 2u);
  const auto last = load_prompt_set(path, {1, 0, true});
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].text, "plain");
}

TEST(PromptSet, GzipAndTextDocuments) {
  const std::string path = test::temp_dir("bench-gz") + "/set.jsonl.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  const std::string body = "{\"prompt\": \"zipped\"}\n";
  gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
  gzclose(f);
  EXPECT_EQ(load_prompt_set(path, {}).at(0).text, "zipped");

  const std::string docs = write("docs.txt", "one two three four\nfive\n\n\nsix seven\n\neight\n");
  const auto all = load_prompt_set(docs, {});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].text, "one two three four\nfive");
  const auto openings = load_prompt_set(docs, {0, 3, false});
  EXPECT_EQ(openings[0].text, "one two three");
  EXPECT_EQ(openings[1].text, "six seven");
  const auto tail = load_prompt_set(docs, {2, 1, true});
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail[0].text, "six");
  EXPECT_EQ(tail[1].text, "eight");
}

TEST(PromptSet, BadInputIsAClearError) {
  const std::string bad_json = write("bad.jsonl", "{\"prompt\": \"ok\"}\n{oops\n");
  EXPECT_EQ(error_of([&] { load_prompt_set(bad_json, {}); }), bad_json + ":2: not valid JSON");
  const std::string no_field = write("nofield.jsonl", "{\"answer\": 1}\n");
  EXPECT_EQ(error_of([&] { load_prompt_set(no_field, {}); }),
            no_field + ":1: no 'turns', 'prompt', 'question' or 'text' field");
  const std::string wrong_type = write("wrongtype.jsonl", "{\"prompt\": 3}\n");
  EXPECT_EQ(error_of([&] { load_prompt_set(wrong_type, {}); }),
            wrong_type + ":1: field 'prompt' is not a string or a list of strings");
  const std::string empty = write("empty.jsonl", "\n");
  EXPECT_EQ(error_of([&] { load_prompt_set(empty, {}); }), empty + ": no prompts found");
  const std::string corrupt = write("corrupt.jsonl.gz", std::string("\x1f\x8b\x08\x00garbage", 11));
  EXPECT_NE(error_of([&] { load_prompt_set(corrupt, {}); }).find(corrupt + ": corrupt"),
            std::string::npos);
  EXPECT_EQ(error_of([] { load_prompt_set("/no/such.jsonl", {}); }),
            "/no/such.jsonl: prompt file not found");
}

TEST(PromptSet, RealPromptSets) {
  EAGLE2_SHARED_FILE(mt, "data/prompts/mt_bench_question.jsonl");
  EAGLE2_SHARED_FILE(he, "data/prompts/HumanEval.jsonl.gz");
  EAGLE2_SHARED_FILE(gsm, "data/prompts/gsm8k_test.jsonl");
  EXPECT_EQ(load_prompt_set(mt, {}).size(), 80u);
  const auto humaneval = load_prompt_set(he, {});
  EXPECT_EQ(humaneval.size(), 164u);
  EXPECT_NE(humaneval[0].text.find("def has_close_elements"), std::string::npos);
  EXPECT_EQ(load_prompt_set(gsm, {}).size(), 1319u);
}

TEST(Bench, GreedyEqualityCheckCatchesAMismatch) {
  auto rec = [](const std::string& drafter, float temp, std::vector<int32_t> tokens) {
    RunRecord r;
    // Move-assigned: copying a short literal into the default string trips GCC 12's -Wrestrict
    // false positive (PR105329) at -O2.
    r.prompt_set = std::string("s");
    r.prompt_id = std::string("s:0");
    r.drafter = drafter;
    r.temperature = temp;
    r.tokens = std::move(tokens);
    return r;
  };
  std::vector<RunRecord> ok = {rec("plain", 0, {1, 2, 3}), rec("dynamic", 0, {1, 2, 3}),
                               rec("plain", 1, {4}), rec("dynamic", 1, {5})};
  EXPECT_TRUE(greedy_mismatches(ok).empty());
  std::vector<RunRecord> bad = {rec("plain", 0, {1, 2, 3}), rec("dynamic", 0, {1, 9, 3})};
  const auto m = greedy_mismatches(bad);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], "drafter dynamic on s:0: greedy output differs from plain decoding at token 1");
}

TEST(Bench, MetricsAndSummaries) {
  EXPECT_DOUBLE_EQ(distinct_ngram_ratio({{1, 2, 3, 4, 1, 2, 3, 4}}), 4.0 / 5.0);
  EXPECT_DOUBLE_EQ(distinct_ngram_ratio({{1, 2}}), 1.0);
  RunRecord plain;
  plain.prompt_set = "s";
  plain.drafter = "plain";
  plain.new_tokens = 100;
  plain.decode_seconds = 2;
  plain.cycles = 100;
  plain.accept_histogram = {100};
  RunRecord spec = plain;
  spec.drafter = "dynamic";
  spec.decode_seconds = 0.5;
  spec.cycles = 25;
  spec.accept_histogram = {0, 0, 0, 25};  // 4 tokens per cycle
  spec.draft_seconds = 0.1;
  const auto s = summarize({plain, spec});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[1].speedup, 4.0);
  EXPECT_DOUBLE_EQ(s[1].tau, 4.0);
  EXPECT_DOUBLE_EQ(s[1].draft_share, 0.2);
  EXPECT_DOUBLE_EQ(s[0].tau, 1.0);
}

// The mean tree size per cycle (what an auto budget chose): 1 + drafted / cycles over every run
// of the drafter, in the summary and as the last CSV column / a JSON field.
TEST(Bench, TreeTokensIsTheMeanTreeSizePerCycle) {
  RunRecord plain;
  plain.prompt_set = std::string("s");
  plain.drafter = std::string("plain");
  plain.new_tokens = 40;
  plain.cycles = 40;
  plain.decode_seconds = 1;
  plain.accept_histogram = {40};
  RunRecord a = plain;
  a.drafter = std::string("dynamic:auto");
  a.cycles = 10;
  a.drafted_tokens = 70;  // trees of 8 on average
  a.accept_histogram = {0, 0, 0, 10};
  RunRecord b = a;
  b.cycles = 30;
  b.drafted_tokens = 30;  // trees of 2
  b.accept_histogram = {30};
  const auto s = summarize({plain, a, b});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].tree_tokens, 1.0);
  EXPECT_EQ(s[1].drafted_tokens, 100);
  EXPECT_DOUBLE_EQ(s[1].tree_tokens, 1.0 + 100.0 / 40.0);
  const std::string csv = summaries_to_csv(s);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header,
            "prompt_set,drafter,temperature,runs,new_tokens,tokens_per_second,speedup,tau,"
            "draft_share,verify_share,distinct4,tree_tokens");
  EXPECT_NE(csv.find("\ns,plain,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1\ns,dynamic:auto,"), std::string::npos) << csv;
  EXPECT_EQ(csv.substr(csv.rfind(',') + 1), "3.5\n") << csv;
  const auto j = nlohmann::json::parse(bench_to_json(s, {plain, a, b}));
  EXPECT_DOUBLE_EQ(j["summaries"][1]["tree_tokens"].get<double>(), 3.5);
  EXPECT_EQ(j["summaries"][1]["drafted_tokens"].get<int64_t>(), 100);
  EXPECT_EQ(j["runs"][2]["drafted_tokens"].get<int64_t>(), 30);
}

TEST(Bench, CalibrationBinsEveryDraftedNode) {
  EXPECT_EQ(Calibration::bin_of(0.0), 0);
  EXPECT_EQ(Calibration::bin_of(0.0999), 0);
  EXPECT_EQ(Calibration::bin_of(0.1), 1);
  EXPECT_EQ(Calibration::bin_of(1.0), 9);
  EXPECT_EQ(Calibration::bin_of(1.5), 9);
  EXPECT_EQ(Calibration::bin_of(-1.0), 0);
  // root -> a (0.95) -> c (0.45); root -> b (0.05). Accepted: root, a.
  DraftTree t;
  t.reset(7);
  t.add(1, 0, std::log(0.95f));
  t.add(2, 0, std::log(0.05f));
  t.add(3, 1, std::log(0.45f));
  Verdict v;
  v.path = {0, 1};
  Calibration c;
  c.add(t, v);
  EXPECT_EQ(c.total_nodes(), 3);
  EXPECT_EQ(c.total_accepted(), 1);
  EXPECT_EQ(c.nodes[9], 1);
  EXPECT_EQ(c.accepted[9], 1);
  EXPECT_EQ(c.nodes[0], 1);
  EXPECT_EQ(c.nodes[4], 1);
  EXPECT_EQ(c.accepted[4], 0);
  EXPECT_NEAR(c.estimate_sum[4], 0.45, 1e-6);
  Calibration twice = c;
  twice.merge(c);
  EXPECT_EQ(twice.total_nodes(), 6);
  EXPECT_NEAR(twice.estimate_sum[9], 1.9, 1e-6);
}

// The whole harness on a real model and head: greedy equality, and calibration counts that agree
// with the accepted-length histograms.
TEST(Bench, RunBenchOnStoriesRecordsCalibration) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-eagle-head/config.json");
  Stories stories;
  auto& model = stories.model;
  auto& head = stories.head;
  auto& tok = stories.tok;
  PromptSet set{"s", {{"s:0", "Once upon a time"}, {"s:1", "The little dog"}}};
  BenchOptions opt;
  opt.max_new_tokens = 40;
  opt.temperatures = {0.0f, 1.0f};
  opt.ctx = 256;
  ThreadPool pool(2);
  const auto records =
      run_bench(*model, head.get(), *tok, {set},
                {parse_drafter_spec("plain"), parse_drafter_spec("dynamic"),
                 parse_drafter_spec("chain:3"), parse_drafter_spec("dynamic:auto")},
                opt, pool);
  ASSERT_EQ(records.size(), 16u);
  EXPECT_TRUE(greedy_mismatches(records).empty());
  for (const RunRecord& r : records) {
    if (r.drafter == "plain") {
      EXPECT_EQ(r.calibration.total_nodes(), 0);
      continue;
    }
    int64_t accepted = 0;
    for (size_t a = 0; a < r.accept_histogram.size(); ++a)
      accepted += r.accept_histogram[a] * static_cast<int64_t>(a);
    EXPECT_EQ(r.calibration.total_accepted(), accepted) << r.drafter;
    // Fixed budgets draft every cycle; the auto budget may pause drafting (root-only cycles)
    // while speculation does not pay on this tiny model.
    if (r.drafter != "dynamic:auto") {
      EXPECT_GE(r.calibration.total_nodes(), r.cycles) << r.drafter;
    }
    EXPECT_EQ(r.drafted_tokens, r.calibration.total_nodes()) << r.drafter;
    if (r.drafter == "chain:3") {
      EXPECT_EQ(r.calibration.total_nodes(), 4 * r.cycles);
    }
  }
  for (const Summary& s : summarize(records)) {
    // The auto budget drafts what measured times say pays, which on this tiny model under a
    // loaded machine can be nothing at all; the fixed drafters always draft.
    if (s.drafter != "plain" && s.drafter != "dynamic:auto") {
      EXPECT_GT(s.calibration.total_nodes(), 0) << s.drafter;
    }
    // chain:3 verifies the root and 4 drafted tokens every cycle; plain decoding one token.
    if (s.drafter == "chain:3") {
      EXPECT_DOUBLE_EQ(s.tree_tokens, 5.0);
    }
    if (s.drafter == "plain") {
      EXPECT_DOUBLE_EQ(s.tree_tokens, 1.0);
    }
    if (s.drafter == "dynamic:auto") {
      EXPECT_GE(s.tree_tokens, 1.0);
      EXPECT_LE(s.tree_tokens, 65.0);
    }
  }
}

// A learning drafter (calibrated confidences) must be measured the same whatever ran before it:
// the T = 1 pass after a T = 0 pass equals a T = 1 pass alone, token for token and cycle for
// cycle. Before drafters were reset, the calibration learned at T = 0 reshaped the T = 1 trees.
TEST(Bench, PassesDoNotInheritDrafterState) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-eagle-head/config.json");
  Stories stories;
  auto& model = stories.model;
  auto& head = stories.head;
  auto& tok = stories.tok;
  PromptSet set{
      "s",
      {{"s:0", "Once upon a time"}, {"s:1", "The little dog"}, {"s:2", "Tom and his mom went"}}};
  BenchOptions opt;
  opt.max_new_tokens = 48;
  opt.ctx = 256;
  opt.warmup_prompts = 1;
  ThreadPool pool(1);
  const std::vector<DrafterSpec> specs = {parse_drafter_spec("dynamic:8:4:4:cal")};
  opt.temperatures = {0.0f, 1.0f};
  const auto both = run_bench(*model, head.get(), *tok, {set}, specs, opt, pool);
  opt.temperatures = {1.0f};
  const auto alone = run_bench(*model, head.get(), *tok, {set}, specs, opt, pool);
  ASSERT_EQ(both.size(), 6u);
  ASSERT_EQ(alone.size(), 3u);
  for (size_t i = 0; i < alone.size(); ++i) {
    const RunRecord& after = both[3 + i];
    ASSERT_EQ(after.temperature, 1.0f);
    EXPECT_EQ(after.tokens, alone[i].tokens) << alone[i].prompt_id;
    EXPECT_EQ(after.accept_histogram, alone[i].accept_histogram) << alone[i].prompt_id;
    EXPECT_EQ(after.calibration.total_nodes(), alone[i].calibration.total_nodes());
  }
}

// "dynamic:...@HEAD_DIR" beside the engine's head in one run: that column drafts with the named
// head (its records equal a run where that head is the engine's), and greedy output stays plain
// decoding's. The bundled model with its EAGLE-2 head and the reference EAGLE-3 head.
TEST(Bench, AColumnMayDraftWithItsOwnHead) {
  EAGLE2_SHARED_FILE(cfg, "data/models/code-lm-eagle3-ref/config.json");
  const std::string dir3 = test::shared_dir() + "/data/models/code-lm-eagle3-ref";
  auto model = LlamaModel::load(test::kBundledModel);
  auto head2 = EagleHead::load(std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm-eagle", *model);
  auto head3 = EagleHead::load(dir3, *model);
  auto tok = Tokenizer::load(test::kBundledModel + "/tokenizer.model");
  PromptSet set{"code", {{"c:0", "def add(a, b):"}, {"c:1", "import os\nimport sys\n"}}};
  BenchOptions opt;
  opt.max_new_tokens = 24;
  opt.ctx = 256;
  opt.warmup_prompts = 0;
  opt.temperatures = {0.0f};
  ThreadPool pool(2);
  const auto both = run_bench(*model, head2.get(), *tok, {set},
                              {parse_drafter_spec("plain"), parse_drafter_spec("dynamic:16:3:4"),
                               parse_drafter_spec("dynamic:16:3:4@" + dir3)},
                              opt, pool);
  const auto alone = run_bench(*model, head3.get(), *tok, {set},
                               {parse_drafter_spec("dynamic:16:3:4")}, opt, pool);
  ASSERT_EQ(both.size(), 6u);
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_TRUE(greedy_mismatches(both).empty());
  for (size_t p = 0; p < 2; ++p) {
    const RunRecord& own = both[3 * p + 2];
    EXPECT_EQ(own.drafter, "dynamic:16:3:4@" + dir3);
    EXPECT_EQ(own.tokens, alone[p].tokens);
    EXPECT_EQ(own.accept_histogram, alone[p].accept_histogram) << own.prompt_id;
    EXPECT_EQ(own.tokens, both[3 * p].tokens);  // plain decoding's
  }
  // The two heads draft differently (else this test could not tell them apart).
  EXPECT_NE(both[1].accept_histogram, both[2].accept_histogram);
}

// reset() forgets the sequence's own state (timing averages, pause state); what was learned for
// the (head, temperature) stays in the shared policy until its owner forgets it, as bench does
// before every pass.
TEST(Bench, ResetForgetsTheSequenceStateAndTheOwnerForgetsTheCalibration) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-eagle-head/config.json");
  Stories stories;
  auto& model = stories.model;
  auto& head = stories.head;
  auto& tok = stories.tok;
  ThreadPool pool(1);
  DraftPolicies policies;
  const auto drafter =
      make_drafter(parse_drafter_spec("dynamic:8:4:4:cal"), head.get(), pool, 256, policies, 0.0f);
  auto& eagle = dynamic_cast<EagleDrafter&>(*drafter);
  KvCache kv = model->make_cache(256);
  GenerationOptions g;
  g.max_new_tokens = 32;
  speculative_generate(*model, kv, eagle, tok->encode("Once upon a time", true), g, pool,
                       [](int32_t) { return true; });
  const int64_t learned = eagle.calibration().observations();
  EXPECT_GT(learned, 0);
  EXPECT_EQ(policies.get(*head, 0.0f)->calibration().observations(), learned);
  EXPECT_GT(eagle.draft_seconds_estimate(), 0.0);
  eagle.reset();
  EXPECT_EQ(eagle.draft_seconds_estimate(), 0.0);  // no cost model: nothing measured yet
  EXPECT_EQ(eagle.calibration().observations(), learned);
  policies.forget();
  EXPECT_EQ(eagle.calibration().observations(), 0);
}

}  // namespace
}  // namespace eagle2
