// The drafter spec grammar (speculative/drafter_spec.h): parsing, the canonical string, and the
// one make_drafter that bench, demo and generate share.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "draft/draft_tree.h"
#include "speculative/drafter_spec.h"
#include "support/eagle3_heads.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

using test::error_of;

TEST(DrafterSpec, Parses) {
  EXPECT_EQ(parse_drafter_spec("dynamic:16:3:4").dynamic.total_tokens, 16);
  EXPECT_EQ(parse_drafter_spec("dynamic:16:3:4").dynamic.depth, 3);
  EXPECT_EQ(parse_drafter_spec("dynamic:16:3:4").dynamic.top_k, 4);
  EXPECT_FALSE(parse_drafter_spec("dynamic:16:3:4").auto_budget);
  const DrafterSpec a = parse_drafter_spec("dynamic:auto");
  EXPECT_TRUE(a.auto_budget);
  EXPECT_EQ(a.dynamic.total_tokens, DrafterSpec::kAutoMaxTokens);
  EXPECT_EQ(a.dynamic.depth, 5);
  const DrafterSpec a2 = parse_drafter_spec("dynamic:auto:4:8");
  EXPECT_TRUE(a2.auto_budget);
  EXPECT_EQ(a2.dynamic.depth, 4);
  EXPECT_EQ(a2.dynamic.top_k, 8);
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:auto:4"); }),
            "drafter 'dynamic:auto:4': expected "
            "dynamic:auto[:DEPTH:TOP_K][:novalue|:norerank][:cal]");
  EXPECT_EQ(parse_drafter_spec("chain:7").chain_depth, 7);
  EXPECT_EQ(parse_drafter_spec("static").choices.size(), 25u);
  EXPECT_EQ(error_of([] { parse_drafter_spec("magic"); }),
            "unknown drafter 'magic' (plain, none, lookup[:D], chain[:D], static[:N|:JSON], "
            "dynamic[:T:D:K][:novalue|:norerank][:cal], "
            "dynamic:auto[:D:K][:novalue|:norerank][:cal], DYNAMIC+suffix[:T[:D[:P]]], "
            "sampled[:T:D:K], sps:DRAFT_DIR[:D[:K]], lookahead[:W:N:G], suffix[:T[:D[:P]]], "
            "medusa:HEADS_DIR[:T], hydra:HEADS_DIR[:T])");
  // static:N prunes EAGLE-1's tree to its first N - 1 paths, prefixes intact.
  const DrafterSpec s8 = parse_drafter_spec("static:8");
  ASSERT_EQ(s8.choices.size(), 7u);
  EXPECT_EQ(s8.choices.back(), (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_drafter_spec("static:26").choices.size(), 25u);
  EXPECT_EQ(error_of([] { parse_drafter_spec("static:27"); }),
            "drafter 'static:27': a pruned static tree has 2 to 26 tokens");
  EXPECT_EQ(parse_drafter_spec("static:[[0],[0,0]]").choices.size(), 2u);
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:1:2"); }),
            "drafter 'dynamic:1:2': expected "
            "dynamic:TOTAL_TOKENS:DEPTH:TOP_K[:novalue|:norerank][:cal]");
  // :cal switches calibration on for any dynamic form.
  EXPECT_FALSE(parse_drafter_spec("dynamic:8:6:2").calibrate);
  const DrafterSpec c = parse_drafter_spec("dynamic:8:6:2:cal");
  EXPECT_TRUE(c.calibrate);
  EXPECT_EQ(c.dynamic.total_tokens, 8);
  EXPECT_TRUE(parse_drafter_spec("dynamic:cal").calibrate);
  EXPECT_EQ(parse_drafter_spec("dynamic:cal").dynamic.total_tokens, 60);
  const DrafterSpec ac = parse_drafter_spec("dynamic:auto:6:2:cal");
  EXPECT_TRUE(ac.calibrate && ac.auto_budget);
  EXPECT_EQ(ac.dynamic.depth, 6);
  EXPECT_EQ(error_of([] { parse_drafter_spec("chain:x"); }),
            "drafter 'chain:x': 'x' is not a non-negative integer");
}

// The EAGLE-2 paper's ablation: ":novalue" (rank by each node's own confidence) or ":norerank"
// (keep the expanded nodes), after T:D:K or auto[:D:K], before ":cal"; one at a time.
TEST(DrafterSpec, ParsesTheAblation) {
  using Ranking = DynamicTreeParams::Ranking;
  const DrafterSpec plain_dynamic = parse_drafter_spec("dynamic:16:3:4");
  EXPECT_EQ(plain_dynamic.dynamic.ranking, Ranking::Value);
  EXPECT_TRUE(plain_dynamic.dynamic.rerank);
  const DrafterSpec nv = parse_drafter_spec("dynamic:16:3:4:novalue");
  EXPECT_EQ(nv.dynamic.ranking, Ranking::OwnConfidence);
  EXPECT_TRUE(nv.dynamic.rerank);
  EXPECT_EQ(nv.dynamic.total_tokens, 16);
  EXPECT_EQ(nv.dynamic.depth, 3);
  EXPECT_EQ(nv.dynamic.top_k, 4);
  EXPECT_FALSE(nv.calibrate);
  const DrafterSpec nr = parse_drafter_spec("dynamic:16:3:4:norerank");
  EXPECT_EQ(nr.dynamic.ranking, Ranking::Value);
  EXPECT_FALSE(nr.dynamic.rerank);
  const DrafterSpec nvc = parse_drafter_spec("dynamic:60:5:10:novalue:cal");
  EXPECT_TRUE(nvc.calibrate);
  EXPECT_EQ(nvc.dynamic.ranking, Ranking::OwnConfidence);
  const DrafterSpec anr = parse_drafter_spec("dynamic:auto:4:8:norerank");
  EXPECT_TRUE(anr.auto_budget);
  EXPECT_FALSE(anr.dynamic.rerank);
  EXPECT_EQ(anr.dynamic.depth, 4);
  EXPECT_TRUE(parse_drafter_spec("dynamic:auto:novalue:cal").auto_budget);
  EXPECT_FALSE(parse_drafter_spec("dynamic:norerank").dynamic.rerank);
  EXPECT_EQ(parse_drafter_spec("dynamic:norerank").dynamic.total_tokens, 60);
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:16:3:4:novalue:norerank"); }),
            "drafter 'dynamic:16:3:4:novalue:norerank': at most one of :novalue and :norerank");
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:16:3:4:norerank:norerank"); }),
            "drafter 'dynamic:16:3:4:norerank:norerank': at most one of :novalue and :norerank");
  // :cal comes last, and the ablation does not replace T:D:K.
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:16:3:4:cal:novalue"); }),
            "drafter 'dynamic:16:3:4:cal:novalue': expected "
            "dynamic:TOTAL_TOKENS:DEPTH:TOP_K[:novalue|:norerank][:cal]");
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:16:3:novalue"); }),
            "drafter 'dynamic:16:3:novalue': expected "
            "dynamic:TOTAL_TOKENS:DEPTH:TOP_K[:novalue|:norerank][:cal]");
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:auto:4:norerank"); }),
            "drafter 'dynamic:auto:4:norerank': expected "
            "dynamic:auto[:DEPTH:TOP_K][:novalue|:norerank][:cal]");
  // Only the dynamic tree has the ablation.
  EXPECT_EQ(error_of([] { parse_drafter_spec("chain:novalue"); }),
            "drafter 'chain:novalue': 'novalue' is not a non-negative integer");
}

// medusa:HEADS_DIR[:T] and hydra:HEADS_DIR[:T]: the folder, then T (tokens per tree, root
// included) from the right; T defaults to 8 and is written out.
TEST(DrafterSpec, MedusaAndHydraHeads) {
  const DrafterSpec m = parse_drafter_spec("medusa:models/code-lm-medusa");
  EXPECT_EQ(m.kind, "medusa");
  EXPECT_EQ(m.folder, "models/code-lm-medusa");
  EXPECT_EQ(m.heads_tokens, DrafterSpec::kHeadsDefaultTokens);
  EXPECT_EQ(DrafterSpec::kHeadsDefaultTokens, 8);
  EXPECT_FALSE(m.needs_head());
  EXPECT_EQ(m.to_string(), "medusa:models/code-lm-medusa:8");
  const DrafterSpec h = parse_drafter_spec("hydra:/a:b/heads:12");
  EXPECT_EQ(h.kind, "hydra");
  EXPECT_EQ(h.folder, "/a:b/heads");
  EXPECT_EQ(h.heads_tokens, 12);
  EXPECT_FALSE(h.needs_head());
  EXPECT_EQ(h.to_string(), "hydra:/a:b/heads:12");
  // A folder ending in ":<digits>" needs its T written out.
  EXPECT_EQ(parse_drafter_spec("medusa:dir:7:8").folder, "dir:7");
  EXPECT_FALSE(parse_drafter_spec("medusa:d") == parse_drafter_spec("hydra:d"));
  EXPECT_FALSE(parse_drafter_spec("medusa:d:8") == parse_drafter_spec("medusa:d:9"));
  EXPECT_EQ(parse_drafter_spec("medusa:d"), parse_drafter_spec("medusa:d:8"));
  EXPECT_EQ(error_of([] { parse_drafter_spec("medusa"); }),
            "drafter 'medusa': the folder is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("hydra:"); }),
            "drafter 'hydra:': the folder is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("medusa:d:0"); }),
            "drafter 'medusa:d:0': expected medusa:HEADS_DIR[:T] with T in [1, 1024]");
  EXPECT_EQ(error_of([] { parse_drafter_spec("hydra:d:1025"); }),
            "drafter 'hydra:d:1025': expected hydra:HEADS_DIR[:T] with T in [1, 1024]");
}

// Every form survives parse -> to_string -> parse, and to_string is a fixed point.
TEST(DrafterSpec, RoundTripsThroughItsCanonicalString) {
  for (const char* text : {"plain",
                           "none",
                           "lookup",
                           "lookup:0",
                           "lookup:3",
                           "chain",
                           "chain:0",
                           "chain:7",
                           "static",
                           "static:2",
                           "static:8",
                           "static:26",
                           "static:[[0],[0,0]]",
                           "static:[[1],[1,0],[1,0,2]]",
                           "dynamic",
                           "dynamic:16:3:4",
                           "dynamic:8:6:2:cal",
                           "dynamic:cal",
                           "dynamic:auto",
                           "dynamic:auto:4:8",
                           "dynamic:auto:cal",
                           "dynamic:auto:6:2:cal",
                           "dynamic:16:3:4:novalue",
                           "dynamic:16:3:4:norerank",
                           "dynamic:60:5:10:novalue:cal",
                           "dynamic:8:6:2:norerank:cal",
                           "dynamic:novalue",
                           "dynamic:auto:norerank",
                           "dynamic:auto:4:8:novalue:cal",
                           "lookahead",
                           "lookahead:15:5:15",
                           "lookahead:1:2:0",
                           "lookahead:200:3:56",
                           "suffix",
                           "suffix:8",
                           "suffix:8:3",
                           "suffix:1:0:0",
                           "suffix:1024:63:100",
                           "medusa:m",
                           "medusa:m:3",
                           "hydra:h:16",
                           "hydra:a:1:2"}) {
    const DrafterSpec spec = parse_drafter_spec(text);
    const std::string canonical = spec.to_string();
    EXPECT_EQ(parse_drafter_spec(canonical), spec) << text << " -> " << canonical;
    EXPECT_EQ(parse_drafter_spec(canonical).to_string(), canonical) << text;
  }
  // Defaults are written out; a tree that is a prefix of EAGLE-1's is named by its size.
  EXPECT_EQ(parse_drafter_spec("dynamic").to_string(), "dynamic:60:5:10");
  EXPECT_EQ(parse_drafter_spec("dynamic:auto:cal").to_string(), "dynamic:auto:5:10:cal");
  EXPECT_EQ(parse_drafter_spec("chain").to_string(), "chain:5");
  EXPECT_EQ(parse_drafter_spec("lookup").to_string(), "lookup:6");
  EXPECT_EQ(parse_drafter_spec("static:26").to_string(), "static");
  EXPECT_EQ(parse_drafter_spec("static:[[0],[1],[2]]").to_string(), "static:4");
  EXPECT_EQ(parse_drafter_spec("static:[[1], [1, 0]]").to_string(), "static:[[1],[1,0]]");
  // Equality is of the drafter, not of the spelling.
  EXPECT_EQ(parse_drafter_spec("dynamic"), parse_drafter_spec("dynamic:60:5:10"));
  EXPECT_FALSE(parse_drafter_spec("dynamic:60:5:10") == parse_drafter_spec("dynamic:60:5:10:cal"));
  EXPECT_FALSE(parse_drafter_spec("lookup:5") == parse_drafter_spec("lookup"));
  // The ablation is part of the drafter, and of its canonical string.
  EXPECT_EQ(parse_drafter_spec("dynamic:novalue").to_string(), "dynamic:60:5:10:novalue");
  EXPECT_EQ(parse_drafter_spec("dynamic:auto:norerank:cal").to_string(),
            "dynamic:auto:5:10:norerank:cal");
  const DrafterSpec base = parse_drafter_spec("dynamic:16:3:4");
  const DrafterSpec nv = parse_drafter_spec("dynamic:16:3:4:novalue");
  const DrafterSpec nr = parse_drafter_spec("dynamic:16:3:4:norerank");
  EXPECT_FALSE(base == nv);
  EXPECT_FALSE(base == nr);
  EXPECT_FALSE(nv == nr);
}

// make_drafter hands the ablation to the drafter, whose stats-line name tells the variants apart.
TEST(DrafterSpec, AblationNamesTheDrafter) {
  auto target = test::load_random_model("spec-ablation", test::tiny_config(), DType::F32, 3, 0.3f);
  auto head = EagleHead::load(test::write_random_head("spec-ablation", *target), *target);
  ThreadPool pool(1);
  DraftPolicies policies;
  auto name = [&](const char* spec) {
    return make_drafter(parse_drafter_spec(spec), head.get(), pool, 64, policies, 0.0f)->name();
  };
  EXPECT_EQ(name("dynamic:16:3:4"), "eagle2-dynamic");
  EXPECT_EQ(name("dynamic:16:3:4:novalue"), "eagle2-dynamic-novalue");
  EXPECT_EQ(name("dynamic:16:3:4:norerank:cal"), "eagle2-dynamic-norerank");
}

// Lookahead's canonical string writes W, N and G out; equality compares all three.
TEST(DrafterSpec, LookaheadRoundTrips) {
  EXPECT_EQ(parse_drafter_spec("lookahead").to_string(), "lookahead:2:3:2");
  EXPECT_EQ(parse_drafter_spec("lookahead"), parse_drafter_spec("lookahead:2:3:2"));
  EXPECT_FALSE(parse_drafter_spec("lookahead:5:3:3") == parse_drafter_spec("lookahead:5:3:2"));
  EXPECT_FALSE(parse_drafter_spec("lookahead:5:3:3") == parse_drafter_spec("lookahead:5:4:3"));
  EXPECT_FALSE(parse_drafter_spec("lookahead:5:3:3") == parse_drafter_spec("lookahead:4:3:3"));
}

// suffix[:T[:D[:P]]]: the defaults written out, each number its field, equality over all three.
TEST(DrafterSpec, SuffixForms) {
  EXPECT_EQ(parse_drafter_spec("suffix").to_string(), "suffix:8:7:10");
  const DrafterSpec s = parse_drafter_spec("suffix:24:7:30");
  EXPECT_EQ(s.suffix.tokens, 24);
  EXPECT_EQ(s.suffix.depth, 7);
  EXPECT_EQ(s.suffix.min_percent, 30);
  EXPECT_FALSE(s.needs_head());
  EXPECT_EQ(parse_drafter_spec("suffix:8").suffix.depth, 7);  // later numbers keep defaults
  EXPECT_EQ(parse_drafter_spec("suffix:8:3").suffix.min_percent, 10);
  EXPECT_FALSE(parse_drafter_spec("suffix:8:3:10") == parse_drafter_spec("suffix:8:3:11"));
  EXPECT_FALSE(parse_drafter_spec("suffix:8:3:10") == parse_drafter_spec("suffix:8:4:10"));
  EXPECT_FALSE(parse_drafter_spec("suffix:8:3:10") == parse_drafter_spec("suffix:9:3:10"));
  ThreadPool pool(1);
  DraftPolicies policies;
  EXPECT_EQ(make_drafter(s, nullptr, pool, 64, policies, 0.0f)->name(), "suffix");
}

// Hostile suffix specs: one clear error each, never a crash or a huge allocation.
TEST(DrafterSpec, SuffixHostileSpecs) {
  const std::string form =
      "': expected suffix[:T[:D[:P]]] (tree tokens, draft levels after the first, minimum "
      "frequency %)";
  for (const char* text : {"suffix:", "suffix:4:", "suffix:4:4:4:4", "suffix:::", "suffix:1:2:3:"})
    EXPECT_EQ(error_of([&] { parse_drafter_spec(text); }), std::string("drafter '") + text + form);
  EXPECT_EQ(error_of([] { parse_drafter_spec("suffix:x"); }),
            "drafter 'suffix:x': 'x' is not a non-negative integer");
  EXPECT_EQ(error_of([] { parse_drafter_spec("suffix:4::2"); }),
            "drafter 'suffix:4::2': '' is not a non-negative integer");
  EXPECT_EQ(error_of([] { parse_drafter_spec("suffix:-4"); }),
            "drafter 'suffix:-4': '-4' is not a non-negative integer");
  EXPECT_EQ(error_of([] { parse_drafter_spec("suffix:99999999999"); }),
            "drafter 'suffix:99999999999': '99999999999' is not a non-negative integer");
  const std::string range = "': suffix needs T in [1, 1024], D in [0, 63] and P in [0, 100]";
  for (const auto& [text, got] : std::vector<std::pair<std::string, std::string>>{
           {"suffix:0", "T = 0, D = 7, P = 10"},
           {"suffix:1025", "T = 1025, D = 7, P = 10"},
           {"suffix:8:64", "T = 8, D = 64, P = 10"},
           {"suffix:8:2:101", "T = 8, D = 2, P = 101"},
           {"suffix:2147483647:2147483647:2147483647",
            "T = 2147483647, D = 2147483647, P = 2147483647"}})
    EXPECT_EQ(error_of([&] { parse_drafter_spec(text); }),
              "drafter '" + text + range + " (got " + got + ")");
  EXPECT_EQ(
      error_of([] { parse_drafter_spec("suffix@h"); }),
      "drafter 'suffix@h': only chain, static, dynamic and sampled drafters take an EAGLE head "
      "(@HEAD_DIR)");
}

// lookahead[:W:N:G]: all three numbers or none, in range, the tree bounded; one error each.
TEST(DrafterSpec, LookaheadFormsAndHostileOnes) {
  const DrafterSpec p = parse_drafter_spec("lookahead:15:5:15");  // the reference's W, N, G
  EXPECT_EQ(p.lookahead.window, 15);
  EXPECT_EQ(p.lookahead.ngram_size, 5);
  EXPECT_EQ(p.lookahead.verify_ngrams, 15);
  EXPECT_FALSE(p.needs_head());
  const std::string form = "': expected lookahead[:W:N:G] (window, n-gram size, n-grams verified)";
  for (const char* text : {"lookahead:4", "lookahead:4:4", "lookahead:4:4:", "lookahead:4:4:2:1",
                           "lookahead:", "lookahead::::"})
    EXPECT_EQ(error_of([&] { parse_drafter_spec(text); }), std::string("drafter '") + text + form);
  EXPECT_EQ(error_of([] { parse_drafter_spec("lookahead:a:4:2"); }),
            "drafter 'lookahead:a:4:2': 'a' is not a non-negative integer");
  EXPECT_EQ(error_of([] { parse_drafter_spec("lookahead:-1:4:2"); }),
            "drafter 'lookahead:-1:4:2': '-1' is not a non-negative integer");
  EXPECT_EQ(error_of([] { parse_drafter_spec("lookahead:4:4:99999999999"); }),
            "drafter 'lookahead:4:4:99999999999': '99999999999' is not a non-negative integer");
  const std::string range =
      "': lookahead needs W >= 1, N >= 2, G >= 0 and a tree of (W + G) * (N - 1) <= 512 tokens";
  for (const auto& [text, got] : std::vector<std::pair<std::string, std::string>>{
           {"lookahead:0:4:2", "W = 0, N = 4, G = 2"},
           {"lookahead:4:1:2", "W = 4, N = 1, G = 2"},
           {"lookahead:4:0:2", "W = 4, N = 0, G = 2"},
           {"lookahead:200:3:57", "W = 200, N = 3, G = 57"},
           {"lookahead:2147483647:2147483647:2147483647",
            "W = 2147483647, N = 2147483647, G = 2147483647"}})
    EXPECT_EQ(error_of([&] { parse_drafter_spec(text); }),
              "drafter '" + text + range + " (got " + got + ")");
}

// A lookahead drafter needs no head; its trees are the window and the n-grams.
TEST(DrafterSpec, LookaheadNeedsNoHead) {
  ThreadPool pool(1);
  DraftPolicies policies;
  const auto drafter =
      make_drafter(parse_drafter_spec("lookahead:4:3:2"), nullptr, pool, 64, policies, 0.0f);
  ASSERT_NE(drafter, nullptr);
  EXPECT_EQ(drafter->name(), "lookahead");
  EXPECT_TRUE(drafter->wants_target_tokens());
  drafter->begin(std::vector<int32_t>{1, 2, 3}, nullptr, 4);
  DraftTree tree;
  drafter->draft(64, tree);
  EXPECT_EQ(tree.size(), 4 * 2) << "the window alone: W * (N - 1) rows, the root among them";
  EXPECT_EQ(tree.verifiable, 1);
}

// The number of tokens a lookup drafter proposes when its match is followed by plenty of tokens.
int64_t lookup_draft_tokens(const DrafterSpec& spec) {
  ThreadPool pool(1);
  DraftPolicies policies;
  const std::unique_ptr<Drafter> drafter = make_drafter(spec, nullptr, pool, 256, policies, 0.0f);
  std::vector<int32_t> context;
  for (int rep = 0; rep < 2; ++rep)
    for (int32_t t = 1; t <= 40; ++t) context.push_back(t);
  // The root 1 repeats the start: the match is followed by 2, 3, ... 40.
  drafter->begin(context, nullptr, 1);
  DraftTree tree;
  drafter->draft(100, tree);
  return tree.size() - 1;  // the root is not drafted
}

// One rule for every drafter: D levels after the first. Lookup's default depth is 6 (7 tokens),
// what bench and generate drafted before; an explicit D drafts D + 1, like a chain.
TEST(DrafterSpec, LookupDraftsDepthPlusOneTokens) {
  EXPECT_EQ(lookup_draft_tokens(parse_drafter_spec("lookup")), 7);
  EXPECT_EQ(lookup_draft_tokens(parse_drafter_spec("lookup:6")), 7);
  EXPECT_EQ(lookup_draft_tokens(parse_drafter_spec("lookup:5")), 6);
  EXPECT_EQ(lookup_draft_tokens(parse_drafter_spec("lookup:0")), 1);
}

TEST(DrafterSpec, EagleDraftersNeedAHead) {
  ThreadPool pool(1);
  DraftPolicies policies;
  EXPECT_EQ(make_drafter(parse_drafter_spec("plain"), nullptr, pool, 64, policies, 0.0f), nullptr);
  EXPECT_NE(make_drafter(parse_drafter_spec("none"), nullptr, pool, 64, policies, 0.0f), nullptr);
  EXPECT_EQ(error_of([&] {
              make_drafter(parse_drafter_spec("chain:3"), nullptr, pool, 64, policies, 0.0f);
            }),
            "drafter 'chain:3' needs an EAGLE head: pass --draft HEAD_DIR");
}

// "SPEC@HEAD_DIR": an EAGLE drafter with its own head (bench: two heads in one run). The first '@'
// ends the spec, so a folder may hold '@'; the head is part of the drafter and of its string.
TEST(DrafterSpec, AnEagleDrafterMayNameItsOwnHead) {
  const DrafterSpec d = parse_drafter_spec("dynamic:8:6:2:cal@models/code-lm-eagle3");
  EXPECT_EQ(d.kind, "dynamic");
  EXPECT_EQ(d.dynamic.total_tokens, 8);
  EXPECT_TRUE(d.calibrate);
  EXPECT_EQ(d.head, "models/code-lm-eagle3");
  EXPECT_EQ(d.label, "dynamic:8:6:2:cal@models/code-lm-eagle3");
  EXPECT_EQ(d.to_string(), "dynamic:8:6:2:cal@models/code-lm-eagle3");
  EXPECT_EQ(parse_drafter_spec("chain@/a@b:3").head, "/a@b:3");
  EXPECT_EQ(parse_drafter_spec("chain@/a@b:3").chain_depth, 5);
  for (const char* text : {"chain:3@h", "static:8@h", "dynamic@h", "dynamic:auto@/x/y"}) {
    const DrafterSpec spec = parse_drafter_spec(text);
    EXPECT_EQ(parse_drafter_spec(spec.to_string()), spec) << text;
  }
  EXPECT_EQ(parse_drafter_spec("dynamic@h").to_string(), "dynamic:60:5:10@h");
  EXPECT_FALSE(parse_drafter_spec("dynamic@h") == parse_drafter_spec("dynamic"));
  EXPECT_FALSE(parse_drafter_spec("dynamic@h") == parse_drafter_spec("dynamic@g"));
  EXPECT_EQ(
      error_of([] { parse_drafter_spec("lookup@h"); }),
      "drafter 'lookup@h': only chain, static, dynamic and sampled drafters take an EAGLE head "
      "(@HEAD_DIR)");
  EXPECT_EQ(
      error_of([] { parse_drafter_spec("medusa:m@h"); }),
      "drafter 'medusa:m@h': only chain, static, dynamic and sampled drafters take an EAGLE head "
      "(@HEAD_DIR)");
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:8:6:2@"); }),
            "drafter 'dynamic:8:6:2@': the head folder after '@' is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("dynamic:8:6@h"); }),
            "drafter 'dynamic:8:6': expected dynamic:TOTAL_TOKENS:DEPTH:TOP_K[:novalue|:norerank]"
            "[:cal]");
}

// make_drafter drafts with the named head, not the one it is handed, loading it once per owner of
// the policies (the engine); a missing folder is the loader's error.
TEST(DrafterSpec, TheNamedHeadIsLoadedOnceAndDraftsInsteadOfTheEnginesHead) {
  LlamaConfig c = test::tiny_config();
  c.num_layers = 7;
  auto target = test::load_random_model("spec-own-head", c, DType::F32, 3, 0.3f);
  auto engine_head = EagleHead::load(test::write_random_head("spec-own-head", *target), *target);
  const std::string dir3 =
      test::write_head_folder("spec-own-head3", test::random_eagle3_head(*target));
  ThreadPool pool(1);
  DraftPolicies policies(nullptr, target.get());
  auto name = [&](const std::string& spec) {
    return make_drafter(parse_drafter_spec(spec), engine_head.get(), pool, 64, policies, 0.0f)
        ->name();
  };
  EXPECT_EQ(name("dynamic:16:3:4"), "eagle2-dynamic");
  EXPECT_EQ(name("dynamic:16:3:4@" + dir3), "eagle3-dynamic");
  EXPECT_EQ(name("chain:3@" + dir3 + "/."), "eagle3-chain");
  EXPECT_EQ(policies.assets().size(), 1u);
  EXPECT_NE(error_of([&] { name("dynamic@" + dir3 + "-missing"); }).find(dir3 + "-missing"),
            std::string::npos);
  DraftPolicies no_target;
  EXPECT_EQ(error_of([&] {
              make_drafter(parse_drafter_spec("chain@" + dir3), nullptr, pool, 64, no_target, 0.0f);
            }),
            "drafter 'chain@" + dir3 + "' needs the target model (internal error)");
}

// sps:DRAFT_DIR[:D[:K]]: the folder, then at most two numbers taken from the right, so a folder
// holding ':' reads back as itself from the canonical string (both numbers written).
TEST(DrafterSpec, SpsNamesAFolderAndItsChain) {
  const DrafterSpec a = parse_drafter_spec("sps:models/code-lm-draft");
  EXPECT_EQ(a.kind, "sps");
  EXPECT_EQ(a.folder, "models/code-lm-draft");
  EXPECT_EQ(a.sps_depth, DrafterSpec::kSpsDefaultDepth);
  EXPECT_EQ(a.sps_top_k, 1);
  EXPECT_FALSE(a.needs_head());
  EXPECT_EQ(a.to_string(), "sps:models/code-lm-draft:4:1");
  const DrafterSpec b = parse_drafter_spec("sps:d:6");
  EXPECT_EQ(b.sps_depth, 6);
  EXPECT_EQ(b.sps_top_k, 1);
  const DrafterSpec c = parse_drafter_spec("sps:a:b/x:3:2");
  EXPECT_EQ(c.folder, "a:b/x");
  EXPECT_EQ(c.sps_depth, 3);
  EXPECT_EQ(c.sps_top_k, 2);
  const DrafterSpec d = parse_drafter_spec("sps:runs:7:2:3");  // folder "runs:7"
  EXPECT_EQ(d.folder, "runs:7");
  for (const DrafterSpec& s : {a, b, c, d}) EXPECT_EQ(parse_drafter_spec(s.to_string()), s);
  EXPECT_NE(parse_drafter_spec("sps:x:3:2"), parse_drafter_spec("sps:x:3:1"));
  EXPECT_NE(parse_drafter_spec("sps:x"), parse_drafter_spec("sps:y"));
  EXPECT_EQ(error_of([] { parse_drafter_spec("sps"); }), "drafter 'sps': the folder is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("sps:"); }), "drafter 'sps:': the folder is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("sps:d:3:0"); }),
            "drafter 'sps:d:3:0': expected sps:DRAFT_DIR[:D[:K]] with D in [0, 63], K in [1, 64]");
  EXPECT_EQ(error_of([] { parse_drafter_spec("sps:d:64:1"); }),
            "drafter 'sps:d:64:1': expected sps:DRAFT_DIR[:D[:K]] with D in [0, 63], K in [1, 64]");
  EXPECT_EQ(error_of([] { parse_drafter_spec("sps:d:99999999999:1"); }),
            "drafter 'sps:d:99999999999:1': '99999999999' is not a non-negative integer");
}

}  // namespace
}  // namespace eagle2
