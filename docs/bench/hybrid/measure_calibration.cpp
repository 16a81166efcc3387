// The measurement behind docs/SPECULATIVE.md "Hybrid trees": per-depth empirical acceptance of a
// hybrid tree's nodes by source (a node is tested when its parent was accepted), and what the two
// calibrations learned, over the first 12 prompts of a set with dynamic:8:6:2+suffix, 128 new
// tokens, T = 0, one policy shared by the prompts as in eagle2 bench. Not built by CMake (a
// measurement, not a tool); build it against a release build of the repository:
//   g++ -std=c++20 -O2 -march=native -Isrc -Iinclude docs/bench/hybrid/measure_calibration.cpp \
//     -o /tmp/measure -Wl,--start-group build/src/libeagle2_*.a build/src/libeagle2.a \
//     -Wl,--end-group -lz -lsentencepiece -lpcre2-8 -lutf8proc -fopenmp -lpthread
//   /tmp/measure . bench/prompts/code_edits.jsonl
#include <cmath>
#include <cstdio>
#include <map>

#include "bench/prompt_set.h"
#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "speculative/drafter_spec.h"
#include "speculative/eagle_drafter.h"
#include "speculative/hybrid_drafter.h"
#include "speculative/speculative_decoder.h"
#include "speculative/suffix_drafter.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_load/load_tokenizer.h"

using namespace eagle2;

int main(int argc, char** argv) {
  const std::string root = argv[1], set = argv[2];
  auto target = LlamaModel::load(root + "/models/code-lm");
  auto head = EagleHead::load(root + "/models/code-lm-eagle", *target);
  auto tok = load_tokenizer(root + "/models/code-lm");
  ThreadPool pool(2);
  auto prompts = load_prompt_set(set, {12, 0, false});
  auto policy = std::make_shared<DraftPolicy>();
  // [source 0 head-only,1 suffix-only,2 both][depth] -> (tested, accepted)
  std::map<int, std::map<int, std::pair<long, long>>> tab;
  for (const auto& p : prompts) {
    EagleDrafterOptions o;
    o.dynamic = {2, 6, 8};
    o.context = 1024;
    o.calibrate = true;
    o.record_outcomes = false;
    HybridDrafter d(std::make_unique<EagleDrafter>(*head, pool, o, policy),
                    std::make_unique<SuffixDrafter>(SuffixParams{}), policy, 8);
    std::vector<int32_t> ids = tok->encode(p.text, true);
    GenerationOptions g;
    g.max_new_tokens = 128;
    KvCache kv = target->make_cache(1024);
    SpeculativeHooks hooks;
    hooks.trace = [&](const CycleTrace& c) {
      const DraftTree& t = c.tree;
      std::vector<char> on(t.size(), 0);
      for (int32_t i : c.verdict.path) on[i] = 1;
      const auto depths = t.depths();
      for (size_t i = 1; i < on.size(); ++i) {
        if (!on[t.parents[i]]) continue;
        const int src = t.sources[i] == 3 ? 2 : t.sources[i] == 2 ? 1 : 0;
        auto& cell = tab[src][depths[i]];
        cell.first++;
        cell.second += on[i];
      }
    };
    speculative_generate(
        *target, kv, d, ids, g, pool, [](int32_t) { return true; }, hooks);
  }
  const char* names[] = {"head only", "suffix only", "both"};
  for (auto& [src, m] : tab) {
    std::printf("%s:", names[src]);
    for (auto& [dep, c] : m)
      std::printf("  d%d %ld/%ld=%.2f", dep, c.second, c.first,
                  c.first ? double(c.second) / c.first : 0.0);
    std::printf("\n");
  }
  const AcceptanceCalibration s = policy->suffix_calibration(), h = policy->calibration();
  std::printf("suffix calibration (%lld obs): estimate by own frequency, top sibling / other\n",
              (long long)s.observations());
  for (double f : {1.0, 0.9, 0.75, 0.5, 0.3, 0.15})
    std::printf("  f=%.2f  top %.2f  other %.2f\n", f, s.estimate(std::log(f), 0),
                s.estimate(std::log(f), 1));
  std::printf("head calibration (%lld obs): by draft probability\n", (long long)h.observations());
  for (double f : {0.95, 0.75, 0.5, 0.3, 0.15})
    std::printf("  p=%.2f  top %.2f  other %.2f\n", f, h.estimate(std::log(f), 0),
                h.estimate(std::log(f), 1));
}
