// Lossless by construction: at temperature 0, speculative output equals plain greedy decoding
// token for token, for every drafter and budget, on many prompts of mixed lengths.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "draft/eagle_head.h"
#include "speculative/eagle_drafter.h"
#include "speculative/lookup_drafter.h"
#include "speculative/speculative_decoder.h"
#include "support/decoding.h"
#include "support/random_models.h"
#include "support/scripted_drafter.h"
#include "support/shared_data.h"
#include "tokenizer/tokenizer.h"

namespace eagle2 {
namespace {

struct DrafterCase {
  std::string name;
  std::function<std::unique_ptr<Drafter>(const std::vector<int32_t>& truth)> make;
  int64_t full_depth;  // the longest acceptance this drafter can produce
};

struct Coverage {
  std::map<std::string, std::vector<int64_t>> hist;
  void add(const std::string& name, const SpeculativeStats& st) {
    auto& h = hist[name];
    if (h.size() < st.accept_histogram.size()) h.resize(st.accept_histogram.size(), 0);
    for (size_t a = 0; a < st.accept_histogram.size(); ++a) h[a] += st.accept_histogram[a];
  }
  int64_t at(const std::string& name, size_t a) const {
    auto it = hist.find(name);
    return it == hist.end() || a >= it->second.size() ? 0 : it->second[a];
  }
};

std::vector<DrafterCase> drafter_cases(EagleHead& head, ThreadPool& pool, int64_t vocab,
                                       int64_t ctx) {
  auto eagle = [&head, &pool, ctx](EagleDrafterOptions o) {
    o.context = ctx;
    return [&head, &pool, o](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
      return std::make_unique<EagleDrafter>(head, pool, o);
    };
  };
  using Shape = EagleDrafterOptions::Shape;
  auto options = [](Shape shape, int top_k, int depth, int total, TreeChoices choices, int chain) {
    EagleDrafterOptions o;
    o.shape = shape;
    o.dynamic.top_k = top_k;
    o.dynamic.depth = depth;
    o.dynamic.total_tokens = total;
    o.choices = std::move(choices);
    o.chain_depth = chain;
    return o;
  };
  std::vector<DrafterCase> cases;
  cases.push_back({"dynamic-60-5-10", eagle(options(Shape::Dynamic, 10, 5, 60, {}, 5)), 6});
  cases.push_back({"dynamic-16-3-4", eagle(options(Shape::Dynamic, 4, 3, 16, {}, 5)), 4});
  cases.push_back({"dynamic-6-2-2", eagle(options(Shape::Dynamic, 2, 2, 6, {}, 5)), 3});
  cases.push_back({"static-mc-sim", eagle(options(Shape::Static, 10, 5, 60, mc_sim_7b_63(), 5)), 5});
  cases.push_back({"chain-3", eagle(options(Shape::Chain, 10, 5, 60, {}, 3)), 4});
  cases.push_back({"lookup", [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<LookupDrafter>(3, 1, 5);
                   }, 5});
  cases.push_back({"none", [](const std::vector<int32_t>&) -> std::unique_ptr<Drafter> {
                     return std::make_unique<NoDrafter>();
                   }, 0});
  cases.push_back({"scripted", [vocab](const std::vector<int32_t>& truth) -> std::unique_ptr<Drafter> {
                     return std::make_unique<test::ScriptedDrafter>(
                         test::oracle_script(truth, 5, vocab, static_cast<uint32_t>(truth.size())));
                   }, 5});
  return cases;
}

// Runs every drafter on every prompt and checks equality with plain greedy decoding.
void check_equality(LlamaModel& target, EagleHead& head, const std::vector<std::vector<int32_t>>& prompts,
                    int64_t max_new, int64_t ctx, Coverage& cov) {
  ThreadPool pool(2);
  const auto cases = drafter_cases(head, pool, target.config().vocab_size, ctx);
  GenerationOptions opt;
  opt.max_new_tokens = max_new;
  for (size_t p = 0; p < prompts.size(); ++p) {
    const std::vector<int32_t> plain = test::plain_tokens(target, prompts[p], opt, ctx, pool);
    std::vector<int32_t> truth = prompts[p];
    truth.insert(truth.end(), plain.begin(), plain.end());
    for (const DrafterCase& c : cases) {
      auto drafter = c.make(truth);
      SpeculativeStats st;
      const std::vector<int32_t> spec =
          test::speculative_tokens(target, *drafter, prompts[p], opt, ctx, pool, {}, &st);
      ASSERT_EQ(spec, plain) << "drafter " << c.name << ", prompt " << p << " ("
                             << prompts[p].size() << " tokens)";
      cov.add(c.name, st);
    }
  }
}

std::vector<std::string> held_out_openings(const std::string& corpus, size_t n) {
  // Stories are separated by blank lines; take the last n (the head's training used the start).
  std::ifstream in(corpus);
  std::vector<std::string> stories;
  std::string line, cur;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (!cur.empty()) stories.push_back(cur);
      cur.clear();
    } else {
      cur += (cur.empty() ? "" : " ") + line;
    }
  }
  if (!cur.empty()) stories.push_back(cur);
  std::vector<std::string> out;
  for (size_t i = stories.size() - std::min(n, stories.size()); i < stories.size(); ++i) {
    // Mixed lengths: the first 1..40 words.
    std::istringstream words(stories[i]);
    std::string w, text;
    const size_t want = 1 + (i * 7) % 40;
    for (size_t k = 0; k < want && words >> w; ++k) text += (k ? " " : "") + w;
    out.push_back(text);
  }
  return out;
}

TEST(GreedyEquality, StoriesModelEveryDrafterEveryBudget) {
  EAGLE2_SHARED_FILE(model_cfg, "data/models/stories260K-hf/config.json");
  EAGLE2_SHARED_FILE(head_cfg, "data/models/stories260K-eagle-head/config.json");
  EAGLE2_SHARED_FILE(corpus, "data/corpora/tinystories_valid_head.txt");
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  auto target = LlamaModel::load(model_dir);
  auto head = EagleHead::load(head_cfg.substr(0, head_cfg.rfind('/')), *target);
  auto tok = Tokenizer::load(model_dir + "/tokenizer.model");
  std::vector<std::vector<int32_t>> prompts;
  for (const std::string& text : held_out_openings(corpus, static_cast<size_t>(test::scaled(32))))
    prompts.push_back(tok->encode(text, true));
  ASSERT_GE(prompts.size(), static_cast<size_t>(test::scaled(30)));
  Coverage cov;
  check_equality(*target, *head, prompts, 48, 512, cov);
  // The runs must have covered total rejection, partial and full acceptance.
  for (const std::string name : {"dynamic-60-5-10", "scripted"}) {
    SCOPED_TRACE(name);
    EXPECT_GT(cov.at(name, 0), 0) << "no cycle rejected everything";
    int64_t between = 0;
    for (size_t a = 1; a < 6; ++a) between += cov.at(name, a);
    EXPECT_GT(between, 0);
  }
  EXPECT_GT(cov.at("dynamic-60-5-10", 6), 0) << "no cycle accepted the full depth";
  EXPECT_GT(cov.at("scripted", 5), 0) << "no cycle accepted the full scripted depth";
}

TEST(GreedyEquality, RandomModelAndHead) {
  LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("greedy-eq", cfg, DType::BF16, 21, 0.3f);
  auto head = EagleHead::load(test::write_random_head("greedy-eq", *target), *target);
  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> prompts;
  for (int p = 0; p < test::scaled(8); ++p) {
    std::vector<int32_t> ids(1 + rng() % 30);
    for (auto& t : ids) t = static_cast<int32_t>(rng() % cfg.vocab_size);
    prompts.push_back(ids);
  }
  Coverage cov;
  check_equality(*target, *head, prompts, 40, 512, cov);
  EXPECT_GT(cov.at("scripted", 0), 0);
  EXPECT_GT(cov.at("scripted", 5), 0);
}

TEST(GreedyEquality, TightContextShrinksTheTreeButNotTheOutput) {
  LlamaConfig cfg = test::tiny_config();
  auto target = test::load_random_model("greedy-ctx", cfg, DType::F32, 22, 0.3f);
  auto head = EagleHead::load(test::write_random_head("greedy-ctx", *target), *target);
  std::vector<std::vector<int32_t>> prompts = {{1, 5, 7, 9}, {1, 2}};
  Coverage cov;
  // ctx 40: generation runs into the end of the context, where trees must shrink to fit.
  check_equality(*target, *head, prompts, 100, 40, cov);
}

}  // namespace
}  // namespace eagle2
