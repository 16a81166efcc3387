// Training Medusa and Hydra heads (draft/medusa_heads.h) on the target's own continuations, the
// same data as an EAGLE head (head_data.h: token sequences with the target's final-norm features).
//
// At position t of a sequence (f_t: the feature whose lm_head predicts x_{t+1}) head k (1-based)
// learns the target's own distribution of x_{t+1+k}, softmax(lm_head(f_{t+k})): the soft
// cross-entropy against it, lm_head frozen. Hydra's head k also reads E(x_{t+1}) .. E(x_{t+k}),
// teacher-forced with the sequence's tokens (the target's continuation, what verification accepts).
// A position counts for head k while f_{t+k} exists. The loss is the mean over heads of each
// head's mean over its counted positions, every head weighted 1 / K: the heads share no
// parameter, so a weight would only rescale one head's gradient, which AdamW's normalization
// undoes (apart from the global norm clip); Medusa's paper weighs head k by 0.8^k for heads that
// also fine-tune their own lm_heads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "model/llama_model.h"
#include "train/eagle_head_trainer.h"
#include "train/head_data.h"
#include "train/linear.h"
#include "train/parameter.h"

namespace eagle2::train {

struct MedusaInit {
  bool hydra = false;
  int heads = 4;   // K
  int layers = 1;  // ResBlocks per head
  uint64_t seed = 1;
};

// Rows are positions t (b-major windows, as HeadBatch); per head k (0-based here: head k + 1):
// the teacher feature f_{t+k+1} and whether it exists.
struct MedusaBatch {
  int64_t rows = 0, heads = 0;
  std::vector<float> features;  // [rows, d]        f_t
  std::vector<int32_t> tokens;  // [rows, heads]    x_{t+1} .. x_{t+heads} (Hydra's inputs)
  std::vector<float> teachers;  // [heads, rows, d] f_{t+k+1}
  std::vector<uint8_t> masks;   // [heads, rows]    1 = head k counts at this row
  int64_t counted(int64_t head) const;
};

// Rows of sequence s from position `start` on, `n` rows into the batch from row `row` (past the
// sequence's last position: masked padding). The batch must be sized already.
void fill_medusa_rows(MedusaBatch& batch, int64_t row, const HeadSequence& s, int64_t start,
                      int64_t n, int64_t d);
MedusaBatch make_medusa_batch(int64_t rows, int64_t heads, int64_t d);

struct MedusaLoss {
  double total = 0;              // mean over heads
  std::vector<double> per_head;  // soft cross-entropy of each head
};

class MedusaTrainer {
 public:
  // Heads of the target's hidden size; every ResBlock's W starts at 0 (the head starts as the
  // target's own next-token prediction, like the references' identity start), bias 0.
  MedusaTrainer(const LlamaModel& target, const MedusaInit& init);
  MedusaTrainer(const MedusaTrainer&) = delete;
  MedusaTrainer& operator=(const MedusaTrainer&) = delete;

  const MedusaInit& init() const { return init_; }
  const LlamaModel& target() const { return target_; }
  ParamList params() const { return params_; }
  // Head k's (0-based) first ResBlock input width: d, or (k + 2) d for Hydra.
  int64_t input_width(int k) const;

  // Forward over a batch; with backward, gradients are ADDED into the parameters' grads.
  MedusaLoss step(const MedusaBatch& batch, bool backward, ThreadPool& pool);
  // Head k's output states h of the last step ([rows, d]).
  const std::vector<float>& states(int k) const { return acts_[static_cast<size_t>(k)].back(); }

  // dir/config.json (medusa_num_heads / medusa_num_layers or hydra_*, hidden_size, vocab_size)
  // and dir/model.safetensors (medusa_head.{k}.{l}.linear.weight/.bias or hydra_head.*, F32 or
  // BF16). Creates dir.
  void save(const std::string& dir, DType dtype = DType::F32) const;

 private:
  const LlamaModel& target_;
  MedusaInit init_;
  int64_t d_;
  std::vector<std::unique_ptr<Parameter>> owned_;
  std::vector<Parameter*> params_;  // per head, per layer: weight, bias
  TransposedMatrix lm_head_t_;
  // Saved by the forward: per head, the input of each block and the last output
  // (acts_[k][l] = block l's input, acts_[k][layers] = the head's state), and each block's z.
  std::vector<std::vector<std::vector<float>>> acts_, zs_;
  std::vector<float> emb_, dx_, dz_, dprev_;
};

struct MedusaTrainProgress {
  int64_t step = 0, steps = 0;
  MedusaLoss loss;  // this step's
  double lr = 0, grad_norm = 0;
  int64_t positions = 0;  // rows counted for head 1 so far
  double seconds = 0;
};

struct MedusaTrainResult {
  MedusaLoss first, last;  // the first step's, and the mean of the last 10 % of steps
  double seconds = 0;
  int64_t positions = 0;
};

// AdamW (0.9, 0.95) with options.weight_decay, clipping at options.clip_norm, warmup then cosine
// decay to lr * min_lr_ratio, options.batch windows of options.seq_len positions per step
// (shuffled epochs), as train_head; noise and ce_weight do not apply.
MedusaTrainResult train_medusa(
    MedusaTrainer& heads, const std::vector<HeadSequence>& data, const HeadTrainOptions& options,
    ThreadPool& pool, const std::function<void(const MedusaTrainProgress&)>& progress = nullptr);

// Per head: how often the target's greedy token at the head's position, argmax lm_head(f_{t+k}),
// is the head's top-1 / among its top-5 (true features), over the positions where it exists.
struct MedusaAgreement {
  std::vector<int64_t> positions;
  std::vector<double> top1, top5;
  MedusaLoss loss;
};
MedusaAgreement evaluate_medusa_agreement(MedusaTrainer& heads,
                                          const std::vector<HeadSequence>& data, int64_t rows,
                                          ThreadPool& pool);

}  // namespace eagle2::train
