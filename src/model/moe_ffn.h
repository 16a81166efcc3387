// The mixture-of-experts MLP of Mixtral and Qwen3-MoE layers: a router picks num_experts_used of
// num_experts SwiGLU experts per row, and the row's MLP output is their outputs weighted by the
// router. Routing follows llama.cpp's build_moe_ffn for these architectures: softmax over the
// router logits, the top k by probability (ties to the lower expert index: llama.cpp's order for
// E <= 16; for larger E its tie order is unspecified), the k probabilities
// renormalised to sum 1 when norm_topk_prob (the sum floored at 2^-14), each expert's down
// projection scaled by its weight, and the k scaled outputs added in rank order.
//
// Cost and batch invariance: the rows routed to one expert are gathered and that expert's three
// matrices are multiplied once over all of them (each expert's weights read once per forward, not
// once per row), then scattered back. The matmul kernels give every row the same bits whatever
// the other rows, and each row's k outputs are summed in its own rank order, so a row's result
// does not depend on which rows share the forward or where they route.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "model/checkpoint_checks.h"

namespace eagle2 {

struct MoeShape {
  int64_t hidden = 0;   // d
  int64_t experts = 0;  // E
  int64_t used = 0;     // k, 1 <= k <= E
  int64_t width = 0;    // each expert's intermediate size
  bool norm_topk_prob = false;
};

// One layer's router and experts. gate/up: E matrices [width, d]; down: E matrices [d, width].
struct MoeWeights {
  Matrix router;  // [E, d]
  std::vector<Matrix> gate, up, down;
};

// Binds "<prefix>mlp.gate.weight" [E, d] and the stacked experts "<prefix>mlp.experts.
// {gate,up,down}_proj.weight" ([E, width, d], [E, width, d], [E, d, width]: GGUF's ffn_*_exps,
// whose expert e is the e-th [width, d] slice, used in place).
MoeWeights bind_moe_weights(const TensorLookup& take, const std::string& prefix,
                            const MoeShape& shape);

// Routing of one row: the `used` experts of largest probability in rank order (ids) and their
// weights, from the E router logits. Exposed for tests.
void moe_route(const float* logits, const MoeShape& shape, int32_t* ids, float* weights);

class MoeFfn {
 public:
  // Scratch holds at most about max_scratch_elements floats (at least one row's): a forward of
  // more rows runs them in chunks, which changes no bit (each row's result is its own).
  static constexpr int64_t kDefaultScratchElements = int64_t{1} << 24;
  explicit MoeFfn(const MoeShape& shape, int64_t max_scratch_elements = kDefaultScratchElements)
      : shape_(shape), max_scratch_(max_scratch_elements) {}
  const MoeShape& shape() const { return shape_; }

  // out[i] = the MLP output of row i (x: the post-attention-normed stream), [T, d], for T rows.
  void forward(const MoeWeights& w, const float* x, int64_t T, float* out, ThreadPool& pool);

  // Distinct experts the rows of forwards since reset_touched() were routed to, summed over the
  // layers (what a forward reads of the expert weights): the cost model of MoE verification.
  int64_t experts_touched() const { return touched_; }
  // Floats the scratch holds now (for tests of its bound).
  int64_t scratch_elements() const;
  void reset_touched() { touched_ = 0; }

 private:
  void forward_rows(const MoeWeights& w, const float* x, int64_t T, float* out, ThreadPool& pool);

  MoeShape shape_;
  int64_t max_scratch_;
  int64_t touched_ = 0;
  // Scratch, grown on demand and reused.
  std::vector<float> logits_, weights_, xg_, gate_, up_, yg_;
  std::vector<int32_t> ids_, slot_of_;  // slot_of_[i * k + r]: where row i's rank r sits in xg_
  std::vector<int64_t> begin_;          // per expert: its first slot (E + 1 offsets)
  std::vector<int64_t> fill_;           // per expert: its next free slot while gathering
};

}  // namespace eagle2
