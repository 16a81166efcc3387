// The public API (include/eagle2/) is a facade over the engine, not a second engine: its value
// types keep the engine's fields and defaults (checked here field by field, so that a default
// changed on one side only fails), its spec is the engine's spec, and what it generates, alone or
// many sequences at once through Engine, is exactly what the engine generates.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "api/convert.h"
#include "eagle2/drafter.h"
#include "eagle2/engine.h"
#include "eagle2/generate.h"
#include "eagle2/head.h"
#include "eagle2/model.h"
#include "eagle2/runtime.h"
#include "speculative/drafter_spec.h"
#include "speculative/generation.h"
#include "support/equality_runs.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

TEST(PublicApi, DefaultsAreTheEngines) {
  const LlamaConfig lc;
  const api::ModelConfig mc;
  EXPECT_EQ(mc.rms_norm_eps, lc.rms_norm_eps);
  EXPECT_EQ(mc.rope_theta, lc.rope_theta);
  EXPECT_EQ(mc.rope_factor, lc.rope_factor);
  EXPECT_EQ(mc.rope_low_freq_factor, lc.rope_low_freq_factor);
  EXPECT_EQ(mc.rope_high_freq_factor, lc.rope_high_freq_factor);
  EXPECT_EQ(mc.rope_original_max_position, lc.rope_original_max_position);
  EXPECT_EQ(mc.bos_token_id, lc.bos_token_id);
  EXPECT_EQ(mc.tie_word_embeddings, lc.tie_word_embeddings);
  EXPECT_EQ(mc.attention_bias, lc.attention_bias);
  EXPECT_EQ(api::to_internal(mc).rope_scaling, lc.rope_scaling);

  const eagle2::DrafterSpec ds;
  const api::DrafterSpec as;
  EXPECT_EQ(as.dynamic.top_k, ds.dynamic.top_k);
  EXPECT_EQ(as.dynamic.depth, ds.dynamic.depth);
  EXPECT_EQ(as.dynamic.total_tokens, ds.dynamic.total_tokens);
  EXPECT_EQ(as.dynamic.ranking == api::DynamicTreeParams::Ranking::Value,
            ds.dynamic.ranking == eagle2::DynamicTreeParams::Ranking::Value);
  EXPECT_EQ(as.dynamic.rerank, ds.dynamic.rerank);
  EXPECT_EQ(as.auto_budget, ds.auto_budget);
  EXPECT_EQ(as.chain_depth, ds.chain_depth);
  EXPECT_EQ(as.lookup_depth, ds.lookup_depth);
  EXPECT_EQ(as.calibrate, ds.calibrate);
  EXPECT_EQ(api::DrafterSpec::kAutoMaxTokens, eagle2::DrafterSpec::kAutoMaxTokens);
  EXPECT_EQ(api::DrafterSpec::kLookupDefaultDepth, eagle2::DrafterSpec::kLookupDefaultDepth);
  EXPECT_EQ(as.lookahead.window, ds.lookahead.window);
  EXPECT_EQ(as.lookahead.ngram_size, ds.lookahead.ngram_size);
  EXPECT_EQ(as.lookahead.verify_ngrams, ds.lookahead.verify_ngrams);
  EXPECT_EQ(api::LookaheadParams::kMaxTreeTokens, eagle2::LookaheadParams::kMaxTreeTokens);
  EXPECT_EQ(as.heads_tokens, ds.heads_tokens);
  EXPECT_EQ(api::DrafterSpec::kHeadsDefaultTokens, eagle2::DrafterSpec::kHeadsDefaultTokens);

  const GenerationOptions go;
  const api::GenerateOptions ao;
  EXPECT_EQ(ao.max_new_tokens, go.max_new_tokens);
  EXPECT_EQ(ao.stop_at_eos, go.stop_at_eos);
  EXPECT_EQ(ao.sampling.temperature, go.sampling.temperature);
  EXPECT_EQ(ao.sampling.top_k, go.sampling.top_k);
  EXPECT_EQ(ao.sampling.top_p, go.sampling.top_p);
  EXPECT_EQ(ao.sampling.seed, go.sampling.seed);

  const eagle2::CostCurveOptions cc;
  const api::CostCurveOptions ac;
  EXPECT_EQ(ac.ks, cc.ks);
  EXPECT_EQ(ac.context, cc.context);
  EXPECT_EQ(ac.repetitions, cc.repetitions);
  EXPECT_EQ(ac.tree, cc.tree);

  const eagle2::BenchOptions bo;
  const api::BenchOptions ab;
  EXPECT_EQ(ab.repetitions, bo.repetitions);
  EXPECT_EQ(ab.max_new_tokens, bo.max_new_tokens);
  EXPECT_EQ(ab.temperatures, bo.temperatures);
  EXPECT_EQ(ab.seed, bo.seed);
  EXPECT_EQ(ab.ctx, bo.ctx);
  EXPECT_EQ(ab.warmup_prompts, bo.warmup_prompts);

  const eagle2::PromptSetOptions po;
  const api::PromptSetOptions ap;
  EXPECT_EQ(ap.limit, po.limit);
  EXPECT_EQ(ap.opening_words, po.opening_words);
  EXPECT_EQ(ap.from_end, po.from_end);

  const train::HeadTrainOptions ht;
  const api::HeadTrainOptions at;
  EXPECT_EQ(at.steps, ht.steps);
  EXPECT_EQ(at.batch, ht.batch);
  EXPECT_EQ(at.seq_len, ht.seq_len);
  EXPECT_EQ(at.lr, ht.lr);
  EXPECT_EQ(at.warmup, ht.warmup);
  EXPECT_EQ(at.min_lr_ratio, ht.min_lr_ratio);
  EXPECT_EQ(at.noise, ht.noise);
  EXPECT_EQ(at.noise_relative, ht.noise_relative);
  EXPECT_EQ(at.weight_decay, ht.weight_decay);
  EXPECT_EQ(at.clip_norm, ht.clip_norm);
  EXPECT_EQ(at.ce_weight, ht.ce_weight);
  EXPECT_EQ(at.seed, ht.seed);

  const train::SelfDistillOptions sd;
  const api::SelfDistillOptions as2;
  EXPECT_EQ(as2.max_new_tokens, sd.max_new_tokens);
  EXPECT_EQ(as2.greedy, sd.greedy);
  EXPECT_EQ(as2.sampled_per_prompt, sd.sampled_per_prompt);
  EXPECT_EQ(as2.seed, sd.seed);
  EXPECT_EQ(as2.max_tokens, sd.max_tokens);

  const train::HeadInit hi;
  const api::HeadInit ai;
  EXPECT_EQ(ai.seed, hi.seed);
  EXPECT_EQ(ai.fc_identity, hi.fc_identity);
}

TEST(PublicApi, ModelConfigIsReadAndWrittenAsTheEngineDoes) {
  const std::string json = R"({"architectures": ["MistralForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 8,
    "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "tie_word_embeddings": true,
    "bos_token_id": 3, "eos_token_id": [4, 5], "sliding_window": 1024,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 2.0,
                     "high_freq_factor": 6.0, "original_max_position_embeddings": 2048}})";
  const api::ModelConfig c = api::parse_model_config(json, "test");
  const LlamaConfig e = LlamaConfig::parse(json, "test");
  EXPECT_EQ(api::model_config_json(c), e.to_json());
  EXPECT_EQ(c.architecture, "MistralForCausalLM");
  EXPECT_EQ(c.rope_scaling, api::RopeScaling::Llama3);
  EXPECT_STREQ(api::rope_scaling_name(c.rope_scaling), "llama3");
  EXPECT_EQ(c.rope_low_freq_factor, 2.0f);
  EXPECT_EQ(c.rope_original_max_position, 2048);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_EQ(api::model_config_json(api::to_public(api::to_internal(c))), e.to_json());
  // The engine's errors, word for word.
  EXPECT_EQ(test::error_of([&] { api::parse_model_config("{", "where"); }),
            test::error_of([&] { LlamaConfig::parse("{", "where"); }));
  EXPECT_STREQ(api::dtype_name(api::DType::BF16), "BF16");
}

TEST(PublicApi, DrafterSpecIsTheEngineSpec) {
  for (const char* text : {"plain",
                           "none",
                           "lookup",
                           "lookup:3",
                           "chain",
                           "chain:2",
                           "static",
                           "static:9",
                           "static:[[0],[1],[0,0]]",
                           "dynamic",
                           "dynamic:16:3:4",
                           "dynamic:8:6:2:cal",
                           "dynamic:auto",
                           "dynamic:auto:4:8:cal",
                           "dynamic:16:3:4:novalue",
                           "dynamic:16:3:4:norerank",
                           "dynamic:auto:4:8:novalue:cal",
                           "lookahead",
                           "lookahead:15:5:15",
                           "medusa:dir",
                           "hydra:dir:12"}) {
    const api::DrafterSpec a = api::parse_drafter_spec(text);
    const eagle2::DrafterSpec e = eagle2::parse_drafter_spec(text);
    EXPECT_EQ(a.to_string(), e.to_string()) << text;
    EXPECT_EQ(a.needs_head(), e.needs_head()) << text;
    EXPECT_EQ(a.label, e.label) << text;
    EXPECT_TRUE(api::to_internal(a) == e) << text;
    EXPECT_TRUE(api::parse_drafter_spec(a.to_string()) == a) << text;
  }
  EXPECT_FALSE(api::parse_drafter_spec("chain:2") == api::parse_drafter_spec("chain:3"));
  // The ablation is copied both ways: each variant differs from the others.
  EXPECT_FALSE(api::parse_drafter_spec("dynamic:16:3:4:novalue") ==
               api::parse_drafter_spec("dynamic:16:3:4:norerank"));
  EXPECT_FALSE(api::parse_drafter_spec("dynamic:16:3:4") ==
               api::parse_drafter_spec("dynamic:16:3:4:norerank"));
  EXPECT_EQ(api::parse_drafter_spec("dynamic:16:3:4:novalue").dynamic.ranking,
            api::DynamicTreeParams::Ranking::OwnConfidence);
  EXPECT_FALSE(api::parse_drafter_spec("dynamic:16:3:4:norerank").dynamic.rerank);
  // Each lookahead field crosses the API (a field the conversion forgot reads as the default).
  const api::DrafterSpec la = api::parse_drafter_spec("lookahead:7:4:2");
  EXPECT_EQ(la.lookahead.window, 7);
  EXPECT_EQ(la.lookahead.ngram_size, 4);
  EXPECT_EQ(la.lookahead.verify_ngrams, 2);
  EXPECT_FALSE(la == api::parse_drafter_spec("lookahead:7:4:3"));
  EXPECT_FALSE(la == api::parse_drafter_spec("lookahead:7:3:2"));
  EXPECT_FALSE(la == api::parse_drafter_spec("lookahead:6:4:2"));
  EXPECT_FALSE(api::parse_drafter_spec("medusa:d:7") == api::parse_drafter_spec("medusa:d:8"));
  EXPECT_EQ(test::error_of([] { api::parse_drafter_spec("magic"); }),
            test::error_of([] { eagle2::parse_drafter_spec("magic"); }));
}

// A random target, its random head, and prompts of random ids.
struct PublicApiFixture {
  std::string model_dir, head_dir;
  std::vector<std::vector<int32_t>> prompts;
  PublicApiFixture() {
    auto target = test::load_random_model("public-api", test::tiny_config(), DType::BF16, 21, 0.3f);
    model_dir = target->dir();
    head_dir = test::write_random_head("public-api", *target);
    prompts = test::random_prompts(4, 4, target->config().vocab_size);
  }
};

TEST(PublicApi, GenerationIsTheEngines) {
  const PublicApiFixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Head head = api::Head::load(fx.head_dir, model);
  api::Threads threads(2);
  auto engine_model = LlamaModel::load(fx.model_dir);
  ThreadPool pool(2);
  for (const float temperature : {0.0f, 0.8f}) {
    api::GenerateOptions opt;
    opt.max_new_tokens = 20;
    opt.sampling.temperature = temperature;
    opt.sampling.seed = 9;
    for (const auto& prompt : fx.prompts) {
      // The engine's plain decoding.
      KvCache kv = engine_model->make_cache(128);
      std::vector<int32_t> want;
      const GenerationStats est =
          generate_plain(*engine_model, kv, prompt, api::to_internal(opt), pool, [&](int32_t t) {
            want.push_back(t);
            return true;
          });
      std::vector<int32_t> plain;
      api::KvCache akv(model, 128);
      const api::Stats st = api::generate_plain(model, akv, prompt, opt, threads, [&](int32_t t) {
        plain.push_back(t);
        return true;
      });
      EXPECT_EQ(plain, want);
      EXPECT_EQ(st.new_tokens, est.new_tokens);
      EXPECT_EQ(st.prompt_tokens, static_cast<int64_t>(prompt.size()));
      for (const char* spec : {"dynamic:12:3:4", "chain:2", "lookup"}) {
        api::Drafter drafter =
            api::Drafter::make(api::parse_drafter_spec(spec), &head, threads, 128, temperature);
        ASSERT_TRUE(drafter) << spec;
        api::KvCache skv(model, 128);
        std::vector<int32_t> got;
        int64_t cycles = 0, committed = 0;
        const api::Stats ss = api::generate_speculative(
            model, skv, drafter, prompt, opt, threads,
            [&](int32_t t) {
              got.push_back(t);
              return true;
            },
            [&](const api::Cycle& c) {
              EXPECT_EQ(c.cycle, cycles++);
              EXPECT_EQ(c.parents[0], -1);
              EXPECT_EQ(c.path[0], 0);
              EXPECT_EQ(c.accepted, static_cast<int64_t>(c.path.size()) - 1);
              committed += c.accepted + 1;
            });
        EXPECT_EQ(got, want) << spec << " at temperature " << temperature;
        EXPECT_EQ(ss.cycles, cycles) << spec;
        EXPECT_GT(ss.tau, 0) << spec;
        EXPECT_NEAR(ss.tau, static_cast<double>(committed) / static_cast<double>(cycles), 1e-12);
        EXPECT_NEAR(ss.other_seconds, ss.decode_seconds - ss.draft_seconds - ss.verify_seconds,
                    1e-12);
      }
    }
  }
  EXPECT_FALSE(api::Drafter::make(api::parse_drafter_spec("plain"), nullptr, threads, 128, 0));
}

TEST(PublicApi, EngineDecodesEverySequenceAsAlone) {
  const PublicApiFixture fx;
  api::Model model = api::Model::load(fx.model_dir);
  api::Head head = api::Head::load(fx.head_dir, model);
  api::Threads threads(2);
  api::Engine engine(model, 1024, 128, threads);
  struct Want {
    int64_t id;
    std::vector<int32_t> tokens;
  };
  std::vector<Want> wants;
  const char* specs[] = {"plain", "dynamic:12:3:4", "lookup", "chain:3"};
  for (size_t i = 0; i < fx.prompts.size(); ++i) {
    api::GenerateOptions opt;
    opt.max_new_tokens = 10 + 4 * static_cast<int64_t>(i);
    opt.sampling.temperature = i % 2 ? 0.7f : 0.0f;
    opt.sampling.seed = 100 + i;
    api::KvCache kv(model, 128);
    std::vector<int32_t> alone;
    api::generate_plain(model, kv, fx.prompts[i], opt, threads, [&](int32_t t) {
      alone.push_back(t);
      return true;
    });
    const api::DrafterSpec spec = api::parse_drafter_spec(specs[i % 4]);
    wants.push_back({engine.add(fx.prompts[i], opt, spec, &head), alone});
    if (i == 1) engine.step();  // the later ones join mid-way
  }
  while (engine.step() > 0) {
  }
  EXPECT_EQ(engine.live(), 0);
  for (const Want& w : wants) {
    EXPECT_TRUE(engine.finished(w.id));
    EXPECT_FALSE(engine.failed(w.id));  // a length stop, not a failure (test_batch_step_alone)
    EXPECT_EQ(engine.tokens(w.id), w.tokens) << "sequence " << w.id;
    EXPECT_EQ(engine.stats(w.id).new_tokens, static_cast<int64_t>(w.tokens.size()));
    engine.remove(w.id);
  }
  // The engine's errors come through as they are.
  EXPECT_EQ(test::error_of([&] { engine.add({}, {}, api::parse_drafter_spec("plain")); }),
            "the prompt is empty");
  EXPECT_EQ(test::error_of([&] { engine.add({1}, {}, api::parse_drafter_spec("chain")); }),
            test::error_of([&] {
              eagle2::DraftPolicies policies;
              ThreadPool pool(1);
              make_drafter(eagle2::parse_drafter_spec("chain"), nullptr, pool, 128, policies, 0);
            }));
}

TEST(PublicApi, ErrorsAreEagle2Errors) {
  EXPECT_EQ(test::error_of([] { api::Model::load("/nonexistent/model"); }).rfind("/nonexistent", 0),
            0u);
  EXPECT_EQ(test::error_of([] { api::parse_tree_choices("[[0, 0]]", "here"); }),
            test::error_of([] { eagle2::parse_tree_choices("[[0, 0]]", "here"); }));
  EXPECT_GE(api::default_thread_count(), 1);
  EXPECT_FALSE(std::string(api::kernel_name()).empty());
}

}  // namespace
}  // namespace eagle2
