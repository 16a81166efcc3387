#include "bench/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "speculative/speculative_decoder.h"

namespace eagle2 {

namespace {

// One generation of `ids` with `drafter` (null: plain decoding) on a fresh cache, its tokens and
// timings recorded in r.
void generate_once(LlamaModel& model, KvCache& kv, Drafter* drafter,
                   const std::vector<int32_t>& ids, const GenerationOptions& opt, ThreadPool& pool,
                   RunRecord& r) {
  kv.truncate(0);
  auto on_token = [&](int32_t t) {
    r.tokens.push_back(t);
    return true;
  };
  if (!drafter) {
    const GenerationStats st = generate_plain(model, kv, ids, opt, pool, on_token);
    r.new_tokens = st.new_tokens;
    r.cycles = st.target_forwards;
    r.decode_seconds = st.decode_seconds;
    r.accept_histogram = {st.target_forwards};
    return;
  }
  SpeculativeHooks hooks;
  hooks.trace = [&r](const CycleTrace& c) { r.calibration.add(c.tree, c.verdict); };
  const SpeculativeStats st =
      speculative_generate(model, kv, *drafter, ids, opt, pool, on_token, hooks);
  r.new_tokens = st.new_tokens;
  r.cycles = st.cycles;
  r.drafted_tokens = st.drafted_tokens;
  r.decode_seconds = st.decode_seconds;
  r.draft_seconds = st.draft_seconds;
  r.verify_seconds = st.verify_seconds;
  r.accept_histogram = st.accept_histogram;
}

std::vector<int32_t> encode_prompt(const Tokenizer& tok, const Prompt& prompt, int64_t ctx) {
  std::vector<int32_t> ids = tok.encode(prompt.text, true);
  if (static_cast<int64_t>(ids.size()) + 8 > ctx)
    fail(prompt.id, ": the prompt has ", ids.size(), " tokens, too many for --ctx ", ctx);
  return ids;
}

}  // namespace

std::vector<RunRecord> run_bench(LlamaModel& model, EagleHead* head, const Tokenizer& tok,
                                 const std::vector<PromptSet>& sets,
                                 const std::vector<DrafterSpec>& specs, const BenchOptions& options,
                                 ThreadPool& pool, const ProgressCallback& progress) {
  if (options.warmup_prompts < 0) fail("bench: warm-up prompt count must be >= 0");
  std::vector<RunRecord> records;
  int64_t total = 0, done = 0;
  for (const auto& s : sets)
    total += static_cast<int64_t>(s.prompts.size() * specs.size() * options.temperatures.size()) *
             options.repetitions;
  // Each drafter column is its own engine: its own policies (so that two columns with the same
  // head never learn from each other's runs), and a drafter per temperature bound to its
  // (head, temperature) policy. Drafters that learn (calibration, pause state, timing averages)
  // keep that across prompts, so before every (temperature, repetition) pass the column's
  // policies forget and its drafter is reset, then warmed on the same unmeasured prompts. A
  // drafter's figures then depend neither on the temperature measured before nor on the order of
  // the passes.
  // One cost curve for every auto drafter, measured before any run.
  std::shared_ptr<const VerifyCostModel> cost;
  for (const auto& spec : specs)
    if (spec.auto_budget && !cost) cost = measure_verify_cost(model, options.ctx, pool);
  std::vector<std::unique_ptr<DraftPolicies>> policies;
  for (size_t d = 0; d < specs.size(); ++d)
    policies.push_back(std::make_unique<DraftPolicies>(cost, &model));
  // The warm-up prompts: the first prompts of the sets, in order (they are measured again later).
  std::vector<std::vector<int32_t>> warmup;
  for (const auto& set : sets)
    for (const auto& prompt : set.prompts)
      if (static_cast<int64_t>(warmup.size()) < options.warmup_prompts)
        warmup.push_back(encode_prompt(tok, prompt, options.ctx));
  KvCache kv = model.make_cache(options.ctx);
  for (const float temp : options.temperatures) {
    std::vector<std::unique_ptr<Drafter>> drafters;
    for (size_t d = 0; d < specs.size(); ++d)
      drafters.push_back(make_drafter(specs[d], head, pool, options.ctx, *policies[d], temp));
    for (int rep = 0; rep < options.repetitions; ++rep) {
      for (size_t d = 0; d < specs.size(); ++d) {
        policies[d]->forget();
        if (drafters[d]) drafters[d]->reset();
        for (size_t w = 0; w < warmup.size(); ++w) {
          GenerationOptions opt;
          opt.max_new_tokens = options.max_new_tokens;
          opt.sampling.temperature = temp;
          opt.sampling.seed = options.seed + 104729 + w;
          RunRecord unmeasured;
          generate_once(model, kv, drafters[d].get(), warmup[w], opt, pool, unmeasured);
        }
      }
      for (const auto& set : sets) {
        for (size_t p = 0; p < set.prompts.size(); ++p) {
          const std::vector<int32_t> ids = encode_prompt(tok, set.prompts[p], options.ctx);
          // Interleaved: every drafter on this prompt before the next prompt, so that slow drift
          // of the machine (thermal, other load) hits all drafters alike.
          for (size_t d = 0; d < specs.size(); ++d) {
            GenerationOptions opt;
            opt.max_new_tokens = options.max_new_tokens;
            opt.sampling.temperature = temp;
            opt.sampling.seed = options.seed + 7919 * static_cast<uint64_t>(rep) + p;
            RunRecord r;
            r.prompt_set = set.name;
            r.prompt_id = set.prompts[p].id;
            r.drafter = specs[d].label;
            r.temperature = temp;
            r.rep = rep;
            generate_once(model, kv, drafters[d].get(), ids, opt, pool, r);
            records.push_back(std::move(r));
            if (progress) progress(++done, total);
          }
        }
      }
    }
  }
  return records;
}

double distinct_ngram_ratio(const std::vector<std::vector<int32_t>>& outputs, size_t n) {
  std::set<std::vector<int32_t>> distinct;
  size_t all = 0;
  for (const auto& o : outputs) {
    for (size_t i = 0; i + n <= o.size(); ++i) {
      distinct.insert(std::vector<int32_t>(o.begin() + static_cast<std::ptrdiff_t>(i),
                                           o.begin() + static_cast<std::ptrdiff_t>(i + n)));
      ++all;
    }
  }
  return all == 0 ? 1.0 : static_cast<double>(distinct.size()) / static_cast<double>(all);
}

std::vector<Summary> summarize(const std::vector<RunRecord>& records) {
  std::vector<Summary> out;
  std::map<std::tuple<std::string, float, std::string>, size_t> index;
  std::map<size_t, std::vector<std::vector<int32_t>>> outputs;
  std::map<size_t, int64_t> committed;
  for (const RunRecord& r : records) {
    const auto key = std::make_tuple(r.prompt_set, r.temperature, r.drafter);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, out.size()).first;
      Summary s;
      s.prompt_set = r.prompt_set;
      s.drafter = r.drafter;
      s.temperature = r.temperature;
      out.push_back(s);
    }
    Summary& s = out[it->second];
    ++s.runs;
    s.new_tokens += r.new_tokens;
    s.cycles += r.cycles;
    s.drafted_tokens += r.drafted_tokens;
    s.decode_seconds += r.decode_seconds;
    s.draft_seconds += r.draft_seconds;
    s.verify_seconds += r.verify_seconds;
    for (size_t a = 0; a < r.accept_histogram.size(); ++a)
      committed[it->second] += r.accept_histogram[a] * static_cast<int64_t>(a + 1);
    outputs[it->second].push_back(r.tokens);
    s.calibration.merge(r.calibration);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    Summary& s = out[i];
    s.tokens_per_second = s.decode_seconds > 0 ? s.new_tokens / s.decode_seconds : 0;
    s.tau = s.cycles > 0 ? static_cast<double>(committed[i]) / s.cycles : 0;
    s.tree_tokens =
        s.cycles > 0 ? 1.0 + static_cast<double>(s.drafted_tokens) / static_cast<double>(s.cycles)
                     : 0;
    s.draft_share = s.decode_seconds > 0 ? s.draft_seconds / s.decode_seconds : 0;
    s.verify_share = s.decode_seconds > 0 ? s.verify_seconds / s.decode_seconds : 0;
    s.distinct4 = distinct_ngram_ratio(outputs[i]);
  }
  for (Summary& s : out) {
    for (const Summary& base : out)
      if (base.drafter == "plain" && base.prompt_set == s.prompt_set &&
          base.temperature == s.temperature && base.tokens_per_second > 0)
        s.speedup = s.tokens_per_second / base.tokens_per_second;
  }
  return out;
}

std::vector<std::string> greedy_mismatches(const std::vector<RunRecord>& records) {
  std::map<std::tuple<std::string, std::string, int>, const RunRecord*> plain;
  for (const RunRecord& r : records)
    if (r.temperature == 0 && r.drafter == "plain")
      plain[std::make_tuple(r.prompt_set, r.prompt_id, r.rep)] = &r;
  std::vector<std::string> out;
  for (const RunRecord& r : records) {
    if (r.temperature != 0 || r.drafter == "plain") continue;
    auto it = plain.find(std::make_tuple(r.prompt_set, r.prompt_id, r.rep));
    if (it == plain.end()) continue;
    if (r.tokens != it->second->tokens) {
      size_t at = 0;
      while (at < r.tokens.size() && at < it->second->tokens.size() &&
             r.tokens[at] == it->second->tokens[at])
        ++at;
      out.push_back("drafter " + r.drafter + " on " + r.prompt_id +
                    ": greedy output differs from plain decoding at token " + std::to_string(at));
    }
  }
  return out;
}

std::string summaries_to_csv(const std::vector<Summary>& rows) {
  std::ostringstream o;
  o << "prompt_set,drafter,temperature,runs,new_tokens,tokens_per_second,speedup,tau,"
       "draft_share,verify_share,distinct4,tree_tokens\n";
  for (const Summary& s : rows)
    o << s.prompt_set << ',' << s.drafter << ',' << s.temperature << ',' << s.runs << ','
      << s.new_tokens << ',' << s.tokens_per_second << ',' << s.speedup << ',' << s.tau << ','
      << s.draft_share << ',' << s.verify_share << ',' << s.distinct4 << ',' << s.tree_tokens
      << '\n';
  return o.str();
}

std::string bench_to_json(const std::vector<Summary>& rows, const std::vector<RunRecord>& records) {
  nlohmann::json j;
  j["summaries"] = nlohmann::json::array();
  for (const Summary& s : rows)
    j["summaries"].push_back({{"prompt_set", s.prompt_set},
                              {"drafter", s.drafter},
                              {"temperature", s.temperature},
                              {"runs", s.runs},
                              {"new_tokens", s.new_tokens},
                              {"tokens_per_second", s.tokens_per_second},
                              {"speedup", s.speedup},
                              {"tau", s.tau},
                              {"draft_share", s.draft_share},
                              {"verify_share", s.verify_share},
                              {"distinct4", s.distinct4},
                              {"calibration",
                               {{"bins", Calibration::kBins},
                                {"nodes", s.calibration.nodes},
                                {"accepted", s.calibration.accepted},
                                {"estimate_sum", s.calibration.estimate_sum}}},
                              {"drafted_tokens", s.drafted_tokens},
                              {"tree_tokens", s.tree_tokens}});
  j["runs"] = nlohmann::json::array();
  for (const RunRecord& r : records)
    j["runs"].push_back({{"prompt_set", r.prompt_set},
                         {"prompt", r.prompt_id},
                         {"drafter", r.drafter},
                         {"temperature", r.temperature},
                         {"rep", r.rep},
                         {"new_tokens", r.new_tokens},
                         {"cycles", r.cycles},
                         {"decode_seconds", r.decode_seconds},
                         {"draft_seconds", r.draft_seconds},
                         {"verify_seconds", r.verify_seconds},
                         {"accept_histogram", r.accept_histogram},
                         {"drafted_tokens", r.drafted_tokens}});
  return j.dump(1);
}

}  // namespace eagle2
