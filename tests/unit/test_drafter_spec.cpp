// The drafter spec grammar (speculative/drafter_spec.h): parsing, the canonical string, and the
// one make_drafter that bench, demo and generate share.
#include "speculative/drafter_spec.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "draft/draft_tree.h"
#include "support/errors.h"

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
            "drafter 'dynamic:auto:4': expected dynamic:auto[:DEPTH:TOP_K][:cal]");
  EXPECT_EQ(parse_drafter_spec("chain:7").chain_depth, 7);
  EXPECT_EQ(parse_drafter_spec("static").choices.size(), 25u);
  EXPECT_EQ(error_of([] { parse_drafter_spec("magic"); }),
            "unknown drafter 'magic' (plain, none, lookup[:D], chain[:D], static[:N|:JSON], "
            "dynamic[:T:D:K][:cal], dynamic:auto[:D:K][:cal], sps:DRAFT_DIR[:D[:K]], "
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
            "drafter 'dynamic:1:2': expected dynamic:TOTAL_TOKENS:DEPTH:TOP_K[:cal]");
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
  EXPECT_EQ(error_of([] { parse_drafter_spec("medusa"); }), "drafter 'medusa': the folder is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("hydra:"); }), "drafter 'hydra:': the folder is missing");
  EXPECT_EQ(error_of([] { parse_drafter_spec("medusa:d:0"); }),
            "drafter 'medusa:d:0': expected medusa:HEADS_DIR[:T] with T in [1, 1024]");
  EXPECT_EQ(error_of([] { parse_drafter_spec("hydra:d:1025"); }),
            "drafter 'hydra:d:1025': expected hydra:HEADS_DIR[:T] with T in [1, 1024]");
}

// Every form survives parse -> to_string -> parse, and to_string is a fixed point.
TEST(DrafterSpec, RoundTripsThroughItsCanonicalString) {
  for (const char* text :
       {"plain", "none", "lookup", "lookup:0", "lookup:3", "chain", "chain:0", "chain:7", "static",
        "static:2", "static:8", "static:26", "static:[[0],[0,0]]", "static:[[1],[1,0],[1,0,2]]",
        "dynamic", "dynamic:16:3:4", "dynamic:8:6:2:cal", "dynamic:cal", "dynamic:auto",
        "dynamic:auto:4:8", "dynamic:auto:cal", "dynamic:auto:6:2:cal", "medusa:m", "medusa:m:3",
        "hydra:h:16", "hydra:a:1:2"}) {
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

}  // namespace
}  // namespace eagle2
