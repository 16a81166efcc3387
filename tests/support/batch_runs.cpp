#include "support/batch_runs.h"

#include <gtest/gtest.h>

#include "speculative/batch_decoder.h"
#include "support/decoding.h"

namespace eagle2::test {

int64_t check_batch_equality(LlamaModel& target, const std::vector<DrafterCase>& cases,
                             const std::vector<std::vector<int32_t>>& prompts,
                             const BatchRunOptions& options, ThreadPool& pool) {
  int64_t checked = 0;
  for (const SamplingParams& sampling : options.sampling)
    for (int n_seq : options.sequence_counts) {
      struct Expect {
        std::vector<int32_t> prompt, tokens;
        GenerationOptions opt;
        size_t drafter;
      };
      std::vector<Expect> expect;
      for (int s = 0; s < n_seq; ++s) {
        Expect e;
        e.prompt = prompts[static_cast<size_t>(s) % prompts.size()];
        e.opt.sampling = sampling;
        e.opt.sampling.seed = sampling.seed + static_cast<uint64_t>(s);
        e.opt.max_new_tokens =
            options.max_new_tokens / 3 + (options.max_new_tokens * 2 / 3) * (s % 4) / 3;
        e.drafter = (static_cast<size_t>(s) + static_cast<size_t>(n_seq)) % cases.size();
        e.tokens = plain_tokens(target, e.prompt, e.opt, options.ctx, pool);
        expect.push_back(std::move(e));
      }
      const int64_t per_seq = (options.ctx + options.block_size - 1) / options.block_size;
      auto kv_pool = target.make_pool(n_seq * per_seq * options.block_size, options.block_size);
      kv_pool->shuffle_free_list(static_cast<uint64_t>(n_seq));
      BatchDecoder decoder(target, kv_pool, options.ctx, pool, options.batch_cost);
      std::vector<int64_t> ids;
      auto add = [&](size_t s) {
        std::vector<int32_t> truth = expect[s].prompt;
        truth.insert(truth.end(), expect[s].tokens.begin(), expect[s].tokens.end());
        ids.push_back(
            decoder.add(expect[s].prompt, expect[s].opt, cases[expect[s].drafter].make(truth)));
      };
      const size_t first = (static_cast<size_t>(n_seq) + 1) / 2;
      for (size_t s = 0; s < first; ++s) add(s);
      int steps = 0;
      while (decoder.live() > 0 || ids.size() < expect.size()) {
        if (steps == 2)
          for (size_t s = first; s < expect.size(); ++s) add(s);
        decoder.step();
        ++steps;
        if (steps > 10000) {
          ADD_FAILURE() << "the batch decoder does not finish";
          return checked;
        }
      }
      for (size_t s = 0; s < expect.size(); ++s) {
        EXPECT_TRUE(decoder.finished(ids[s]));
        EXPECT_EQ(decoder.tokens(ids[s]), expect[s].tokens)
            << "sequence " << s << " of " << n_seq << " (drafter " << cases[expect[s].drafter].name
            << ", temperature " << sampling.temperature << ", seed " << expect[s].opt.sampling.seed
            << ")";
        ++checked;
      }
      EXPECT_EQ(kv_pool->used_blocks(), 0) << "KV blocks still held after every sequence finished";
    }
  return checked;
}

}  // namespace eagle2::test
