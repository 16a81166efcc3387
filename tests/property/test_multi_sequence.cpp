// Many sequences in one forward, over paged KV memory: every row's logits and hidden state are
// bit-identical to running its sequence alone in a cache of its own, whatever the company, the
// interleaving of rows, the block size and the order in which blocks were handed out.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "support/errors.h"
#include "support/random_models.h"

namespace eagle2 {
namespace {

// One sequence of a test: a prompt and the batch it runs next (a single token, a chain or a
// tree, parents local to the batch), and which of those rows it then keeps.
struct Case {
  std::vector<int32_t> prompt;
  Batch next;
  std::vector<int32_t> keep;
};

Case random_case(std::mt19937& rng, int64_t vocab) {
  Case c;
  c.prompt.resize(1 + rng() % 40);
  for (auto& t : c.prompt) t = static_cast<int32_t>(rng() % vocab);
  const auto n = static_cast<int32_t>(1 + rng() % 7);
  std::vector<int32_t> tokens(n), parents(n);
  for (int32_t i = 0; i < n; ++i) {
    tokens[i] = static_cast<int32_t>(rng() % vocab);
    parents[i] = i == 0 ? -1 : static_cast<int32_t>(rng() % i);  // a random tree under row 0
  }
  c.next = Batch::tree(tokens, parents, static_cast<int32_t>(c.prompt.size()));
  // Keep a root-to-node path, as verification does.
  int32_t node = n - 1;
  for (; node >= 0; node = parents[node]) c.keep.insert(c.keep.begin(), node);
  return c;
}

struct Rows {
  std::vector<float> logits, hidden;
};

// The case run alone, in a cache of its own: prefill, the batch, keep, then one more token.
Rows run_alone(LlamaModel& m, const Case& c, ThreadPool& pool) {
  const int64_t V = m.config().vocab_size;
  KvCache kv = m.make_cache(128);
  ForwardResult out;
  m.forward(Batch::causal(c.prompt, 0), kv, {}, out, pool);
  kv.keep_all();
  std::vector<int32_t> rows(static_cast<size_t>(c.next.size()));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  m.forward(c.next, kv, rows, out, pool);
  Rows r{out.logits, out.hidden};
  kv.keep(c.keep);
  const int32_t token = static_cast<int32_t>((c.prompt[0] + 1) % V);
  m.forward(Batch::causal(std::vector<int32_t>{token}, static_cast<int32_t>(kv.size())), kv,
            std::vector<int32_t>{0}, out, pool);
  r.logits.insert(r.logits.end(), out.logits.begin(), out.logits.end());
  return r;
}

// All cases together over one pool: prefills one by one, then the batches of every sequence in
// one forward with their rows interleaved, then one token for every sequence in one forward.
std::vector<Rows> run_together(LlamaModel& m, const std::vector<Case>& cases, int64_t block_size,
                               uint64_t shuffle_seed, ThreadPool& pool) {
  const int64_t V = m.config().vocab_size, d = m.config().hidden_size;
  // Room for every sequence's 128 tokens in whole blocks.
  auto kv_pool = m.make_pool(
      static_cast<int64_t>(cases.size()) * ((128 + block_size - 1) / block_size) * block_size,
      block_size);
  kv_pool->shuffle_free_list(shuffle_seed);
  std::vector<KvCache> caches;
  std::vector<KvCache*> ptrs;
  for (size_t s = 0; s < cases.size(); ++s) caches.push_back(m.make_cache(kv_pool, 128));
  for (auto& c : caches) ptrs.push_back(&c);
  ForwardResult out;
  for (size_t s = 0; s < cases.size(); ++s) {
    m.forward(Batch::causal(cases[s].prompt, 0), caches[s], {}, out, pool);
    caches[s].keep_all();
  }
  // Interleave: take rows round-robin from the sequences, keeping each one's order.
  Batch all;
  all.sequences.clear();
  std::vector<std::vector<int32_t>> batch_row(cases.size());  // [s][local row] -> batch row
  std::vector<size_t> next(cases.size(), 0);
  for (bool any = true; any;) {
    any = false;
    for (size_t s = 0; s < cases.size(); ++s) {
      const Batch& b = cases[s].next;
      if (next[s] >= static_cast<size_t>(b.size())) continue;
      any = true;
      const size_t i = next[s]++;
      batch_row[s].push_back(static_cast<int32_t>(all.tokens.size()));
      all.tokens.push_back(b.tokens[i]);
      all.positions.push_back(b.positions[i]);
      all.parents.push_back(b.parents[i] < 0 ? -1
                                             : batch_row[s][static_cast<size_t>(b.parents[i])]);
      all.sequences.push_back(static_cast<int32_t>(s));
    }
  }
  std::vector<int32_t> rows(all.tokens.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
  m.forward(all, ptrs, rows, out, pool);
  std::vector<Rows> result(cases.size());
  for (size_t s = 0; s < cases.size(); ++s)
    for (int32_t r : batch_row[s]) {
      result[s].logits.insert(result[s].logits.end(), out.logits.begin() + r * V,
                              out.logits.begin() + (r + 1) * V);
      result[s].hidden.insert(result[s].hidden.end(), out.hidden.begin() + r * d,
                              out.hidden.begin() + (r + 1) * d);
    }
  for (size_t s = 0; s < cases.size(); ++s) caches[s].keep(cases[s].keep);
  Batch step;
  for (size_t s = 0; s < cases.size(); ++s) {
    const int32_t token = static_cast<int32_t>((cases[s].prompt[0] + 1) % V);
    step.append(Batch::causal(std::vector<int32_t>{token}, static_cast<int32_t>(caches[s].size())),
                static_cast<int32_t>(s));
  }
  std::vector<int32_t> all_rows(cases.size());
  for (size_t s = 0; s < cases.size(); ++s) all_rows[s] = static_cast<int32_t>(s);
  m.forward(step, ptrs, all_rows, out, pool);
  for (size_t s = 0; s < cases.size(); ++s)
    result[s].logits.insert(result[s].logits.end(), out.logits.begin() + s * V,
                            out.logits.begin() + (s + 1) * V);
  // Every block goes back when the caches go.
  caches.clear();
  EXPECT_EQ(kv_pool->used_blocks(), 0);
  return result;
}

void expect_same_bits(const Rows& a, const Rows& b, const std::string& what) {
  ASSERT_EQ(a.logits.size(), b.logits.size()) << what;
  ASSERT_EQ(a.hidden.size(), b.hidden.size()) << what;
  EXPECT_EQ(0, std::memcmp(a.logits.data(), b.logits.data(), a.logits.size() * sizeof(float)))
      << what;
  EXPECT_EQ(0, std::memcmp(a.hidden.data(), b.hidden.data(), a.hidden.size() * sizeof(float)))
      << what;
}

class MultiSequence : public ::testing::TestWithParam<DType> {};

TEST_P(MultiSequence, EveryRowHasTheBitsOfItsSequenceAlone) {
  auto m = test::load_random_model(std::string("multi_seq_") + dtype_name(GetParam()),
                                   test::tiny_config(), GetParam());
  std::mt19937 rng(31);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (int n_seq : {1, 2, 5, 16}) {
      std::vector<Case> cases;
      for (int s = 0; s < n_seq; ++s) cases.push_back(random_case(rng, m->config().vocab_size));
      std::vector<Rows> alone;
      for (const Case& c : cases) alone.push_back(run_alone(*m, c, pool));
      for (int64_t block : {1, 16, 256}) {
        const std::vector<Rows> together = run_together(*m, cases, block, rng(), pool);
        for (int s = 0; s < n_seq; ++s)
          expect_same_bits(together[s], alone[s],
                           "sequence " + std::to_string(s) + " of " + std::to_string(n_seq) +
                               ", block " + std::to_string(block) + ", " + std::to_string(threads) +
                               " threads");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, MultiSequence, ::testing::Values(DType::F32, DType::BF16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The head's forward over rows of several sequences gives each row the bits of its sequence
// alone.
TEST(MultiSequence, HeadRowsHaveTheBitsOfTheirSequenceAlone) {
  auto m = test::load_random_model("multi_seq_head", test::tiny_config());
  auto head = EagleHead::load(test::write_random_head("multi_seq_head", *m), *m);
  const int64_t d = m->config().hidden_size, V = m->config().vocab_size;
  ThreadPool pool(2);
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const int n_seq = 4;
  std::vector<std::vector<int32_t>> tokens(n_seq);
  std::vector<std::vector<float>> features(n_seq);
  for (int s = 0; s < n_seq; ++s) {
    tokens[s].resize(2 + rng() % 9);
    for (auto& t : tokens[s]) t = static_cast<int32_t>(rng() % V);
    features[s].resize(tokens[s].size() * d);
    for (auto& f : features[s]) f = g(rng);
  }
  // Alone: the causal catch-up of each sequence in its own cache.
  std::vector<std::vector<float>> alone(n_seq);
  for (int s = 0; s < n_seq; ++s) {
    KvCache kv = head->make_cache(64);
    alone[s].resize(features[s].size());
    head->forward_causal(features[s].data(), tokens[s], kv, alone[s].data(), pool);
  }
  // Together: all sequences' rows in one forward, each in its own head cache.
  std::vector<KvCache> caches;
  for (int s = 0; s < n_seq; ++s) caches.push_back(head->make_cache(64));
  std::vector<KvCache*> ptrs;
  for (auto& c : caches) ptrs.push_back(&c);
  std::vector<float> hidden;
  std::vector<int32_t> toks, positions, slots, visible, sequence;
  std::vector<int64_t> begin(1, 0);
  for (int s = 0; s < n_seq; ++s) {
    caches[s].begin_batch(static_cast<int64_t>(tokens[s].size()));
    for (size_t i = 0; i < tokens[s].size(); ++i) {
      hidden.insert(hidden.end(), &features[s][i * d], &features[s][(i + 1) * d]);
      toks.push_back(tokens[s][i]);
      positions.push_back(static_cast<int32_t>(i));
      slots.push_back(static_cast<int32_t>(i));
      for (size_t j = 0; j <= i; ++j) visible.push_back(static_cast<int32_t>(j));
      begin.push_back(static_cast<int64_t>(visible.size()));
      sequence.push_back(s);
    }
  }
  std::vector<float> out(hidden.size());
  head->forward({hidden.data(), toks, positions, slots, visible, begin, sequence}, ptrs, out.data(),
                pool);
  size_t at = 0;
  for (int s = 0; s < n_seq; ++s) {
    EXPECT_EQ(0, std::memcmp(&out[at], alone[s].data(), alone[s].size() * sizeof(float)))
        << "sequence " << s;
    at += alone[s].size();
  }
}

TEST(MultiSequence, BadBatchesAreErrors) {
  auto m = test::load_random_model("multi_seq_F32", test::tiny_config());
  ThreadPool pool(1);
  auto kv_pool = m->make_pool(64);
  KvCache a = m->make_cache(kv_pool, 32), b = m->make_cache(kv_pool, 32);
  ForwardResult out;
  Batch batch = Batch::causal(std::vector<int32_t>{1, 2}, 0);
  batch.sequences = {0, 1};  // row 1's parent is row 0, of the other sequence
  KvCache* both[] = {&a, &b};
  EXPECT_EQ(test::error_of([&] { m->forward(batch, both, {}, out, pool); }),
            "batch: row 1 of sequence 1 has parent 0 of sequence 0");
  batch.sequences = {0, 2};
  EXPECT_EQ(test::error_of([&] { m->forward(batch, both, {}, out, pool); }),
            "batch: row 1 names sequence 2, outside [0, 2)");
  KvCache* same[] = {&a, &a};
  batch.sequences = {0, 0};
  EXPECT_EQ(test::error_of([&] { m->forward(batch, same, {}, out, pool); }),
            "forward: sequences 0 and 1 share one KV cache");
  // A pool too small for every sequence's rows: nobody keeps a reservation.
  auto small = m->make_pool(16, 16);
  KvCache c = m->make_cache(small, 32), e = m->make_cache(small, 32);
  KvCache* two[] = {&c, &e};
  Batch wide;
  wide.append(Batch::causal(std::vector<int32_t>(10, 3), 0), 0);
  wide.append(Batch::causal(std::vector<int32_t>(10, 4), 0), 1);
  EXPECT_EQ(
      test::error_of([&] { m->forward(wide, two, {}, out, pool); }),
      "KV memory full: a batch of 10 tokens needs 1 more blocks of 16 tokens, 0 of 1 are free");
  EXPECT_EQ(small->used_blocks(), 0);
  EXPECT_EQ(c.pending(), 0);
}

}  // namespace
}  // namespace eagle2
