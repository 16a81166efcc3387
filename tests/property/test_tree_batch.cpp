// Tree batches: every node's logits equal, bit for bit, those of a plain causal forward over the
// cached context plus that node's root-to-node path. This is what makes greedy speculative
// decoding lossless.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "model/llama_model.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

struct TreeCase {
  std::vector<int32_t> context, tokens, parents;
};

TreeCase random_tree(std::mt19937& rng, int64_t vocab, int n_context, int n_nodes) {
  TreeCase c;
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(vocab - 1));
  for (int i = 0; i < n_context; ++i) c.context.push_back(tok(rng));
  for (int i = 0; i < n_nodes; ++i) {
    c.tokens.push_back(tok(rng));
    c.parents.push_back(i == 0 ? -1 : std::uniform_int_distribution<int32_t>(0, i - 1)(rng));
  }
  return c;
}

std::vector<float> path_logits(LlamaModel& m, const TreeCase& c, int node, ThreadPool& pool,
                               int chunk) {
  std::vector<int32_t> path;
  for (int n = node; n >= 0; n = c.parents[n]) path.insert(path.begin(), c.tokens[n]);
  std::vector<int32_t> seq = c.context;
  seq.insert(seq.end(), path.begin(), path.end());
  KvCache kv = m.make_cache(256);
  ForwardResult out;
  // Run the sequence in chunks (prefill-like), asking for the last row's logits.
  for (size_t b = 0; b < seq.size(); b += static_cast<size_t>(chunk)) {
    const size_t len = std::min(seq.size() - b, static_cast<size_t>(chunk));
    const int32_t last = static_cast<int32_t>(len - 1);
    m.forward(Batch::causal(std::span(seq).subspan(b, len), static_cast<int32_t>(b)), kv,
              std::span(&last, 1), out, pool);
    kv.keep_all();
  }
  return out.logits;
}

void check_trees(LlamaModel& m, int n_trees, uint32_t seed) {
  std::mt19937 rng(seed);
  ThreadPool pool(2);
  const int64_t V = m.config().vocab_size;
  for (int t = 0; t < n_trees; ++t) {
    const int n_context = 1 + static_cast<int>(rng() % 40),
              n_nodes = 1 + static_cast<int>(rng() % 30);
    TreeCase c = random_tree(rng, V, n_context, n_nodes);
    KvCache kv = m.make_cache(256);
    ForwardResult ctx_out, out;
    m.forward(Batch::causal(c.context, 0), kv, {}, ctx_out, pool);
    kv.keep_all();
    std::vector<int32_t> rows(c.tokens.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    m.forward(Batch::tree(c.tokens, c.parents, n_context), kv, rows, out, pool);
    for (int node = 0; node < n_nodes; ++node) {
      const std::vector<float> want =
          path_logits(m, c, node, pool, 1 + static_cast<int>(rng() % 7));
      ASSERT_EQ(0, std::memcmp(&out.logits[node * V], want.data(), V * sizeof(float)))
          << "tree " << t << " node " << node
          << ": tree logits differ from the path's plain forward";
    }
  }
}

TEST(TreeBatch, NodesEqualTheirPathsBitForBitF32) {
  auto m = test::load_random_model("tree-f32", test::tiny_config(), DType::F32);
  check_trees(*m, test::scaled(12), 1);
}

TEST(TreeBatch, NodesEqualTheirPathsBitForBitBf16) {
  auto m = test::load_random_model("tree-bf16", test::tiny_config(), DType::BF16);
  check_trees(*m, test::scaled(6), 2);
}

TEST(TreeBatch, NodesEqualTheirPathsBitForBitF16) {
  LlamaConfig cfg = test::tiny_config();
  cfg.tie_word_embeddings = true;  // covers the tied lm_head too
  auto m = test::load_random_model("tree-f16", cfg, DType::F16);
  check_trees(*m, test::scaled(6), 3);
}

TEST(TreeBatch, RealModelNodesEqualTheirPaths) {
  EAGLE2_SHARED_FILE(cfg, "data/models/stories260K-hf/config.json");
  auto m = LlamaModel::load(cfg.substr(0, cfg.rfind('/')));
  check_trees(*m, test::scaled(6), 4);
}

TEST(TreeBatch, KeepingAPathEqualsDecodingIt) {
  auto m = test::load_random_model("keep-path", test::tiny_config(), DType::F32);
  ThreadPool pool(2);
  std::mt19937 rng(9);
  const int64_t V = m->config().vocab_size;
  for (int t = 0; t < test::scaled(10); ++t) {
    TreeCase c = random_tree(rng, V, 5, 12);
    KvCache kv = m->make_cache(128);
    ForwardResult out;
    m->forward(Batch::causal(c.context, 0), kv, {}, out, pool);
    kv.keep_all();
    m->forward(Batch::tree(c.tokens, c.parents, 5), kv, {}, out, pool);
    // Keep the path to a random node, then decode one more token on top.
    const int node = static_cast<int>(rng() % c.tokens.size());
    std::vector<int32_t> path;
    for (int n = node; n >= 0; n = c.parents[n]) path.insert(path.begin(), n);
    kv.keep(path);
    const int32_t next = static_cast<int32_t>(rng() % V), row0 = 0;
    m->forward(Batch::causal(std::span(&next, 1), static_cast<int32_t>(kv.size())), kv,
               std::span(&row0, 1), out, pool);
    TreeCase plain = c;
    plain.tokens.push_back(next);
    plain.parents.push_back(node);
    const std::vector<float> want =
        path_logits(*m, plain, static_cast<int>(plain.tokens.size() - 1), pool, 4);
    ASSERT_EQ(0, std::memcmp(out.logits.data(), want.data(), V * sizeof(float))) << "case " << t;
  }
}

}  // namespace
}  // namespace eagle2
