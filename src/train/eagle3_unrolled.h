// EAGLE-3's training-time test: the head unrolled S steps over a window, its loss, and the full
// backward through the unrolled chain (issue 15 item 4; the reference trainer's Model.forward).
//
// A window is T consecutive head positions j = start + t of one sequence (B windows at once,
// rows b-major: row = b * T + t, N = B * T; or ragged, Eagle3Window::lengths). Step s row t:
//   hidden   x_s[t] = fc(features[t]) at s = 0, else h_{s-1}[t] (the head's own previous output)
//   token    tokens[t + 1 + s]            teacher forcing: the ground-truth token, as the reference
//   position positions[t] + s             RoPE, as the reference (position_ids + number of caches)
//   attends  step-0 keys of rows t' <= t and its own keys of steps 1..s (train/ttt_attention.h)
//   teacher  teacher[t + 1 + s]           the target's next-token distribution at that offset
//   counted  iff counted[t + 1 + s]
// and the loss is  sum_s 0.8^s * (mean soft-CE over the counted rows of step s).
// Gradients flow through everything the reference's autograd reaches: the hidden chain (h_s feeds
// step s+1, not detached), the earlier steps' keys and values, fc, the layer, norm and lm_head.
// The embedding is the target's, frozen.
//
// Where we deliberately differ from the reference trainer (SafeAILab/EAGLE traineagle3), and why:
//  - Mean over the COUNTED rows of a step, not over all B*T rows (masked included): a step's
//    weight in the total should not shrink with how many of its rows happen to be padding or
//    masked (later steps and windows near a sequence end count fewer rows). With every row
//    counted the two agree; otherwise it rescales a step's gradient only.
//  - The mask of row (s, t) is the flag of its own teacher offset t + 1 + s. The reference shifts
//    the teacher and the tokens at data preparation but not loss_mask, so its mask index lags the
//    teacher by one position (an off-by-one, not a design choice).
//  - Offsets past a sequence's end: the reference pads tokens and logits with zeros and relies on
//    its mask; here the caller sets counted = 0 there and may put any valid token id. Such rows
//    never reach a counted row: a row's later steps read only its own position, and step-0 keys
//    are read only by later rows, which lie past the end too.
//  - lm_head initialisation is the trainer's choice (Eagle3Weights::init is random as the
//    reference; a warm start from the target's rows is allowed).
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "core/thread_pool.h"
#include "train/eagle3_layer.h"

namespace eagle2::train {

// Weight of step s in the total loss: kTttStepDecay^s (the reference's 0.8).
inline constexpr double kTttStepDecay = 0.8;

// Non-owning view of one batch of windows. Offsets p = 0 .. T+S-1 index a window's positions
// start + p; p >= T only supply tokens and teachers of later steps. Every value must be finite,
// also where nothing counts (zeros are fine): a masked row's zero gradient times a NaN input would
// still poison the weight gradients.
struct Eagle3Window {
  int64_t batch = 0, seq_len = 0, steps = 0;  // B, T, S (each >= 1)
  const float* features = nullptr;            // [B*T, F] captured target features at offsets 0..T-1
  const int32_t* positions = nullptr;         // [B*T] RoPE position of each row at step 0
  const int32_t* tokens = nullptr;            // [B, T+S] target token ids at every offset
  const float* teacher = nullptr;    // [B, T+S, Vd] teacher probabilities (offset 0 never read);
                                     // may be null for eagle3_unrolled_hidden
  const uint8_t* counted = nullptr;  // [B, T+S] 1 where the teacher at that offset counts
  // Optional auxiliary term (not the reference's): EAGLE-1/2's feature regression. With
  // state_weight > 0 each step also adds state_weight * SmoothL1(rmsnorm(h_s) - state) over its
  // counted rows, where state [B, T+S, C] is the target's final-norm state at the teacher's
  // offset (the features whose lm_head row gives that teacher). It hands the head a dense target
  // for the same thing the soft CE teaches (what the target would output there).
  const float* states = nullptr;  // [B, T+S, C]; read only when state_weight > 0
  float state_weight = 0.0f;
  // Optional ragged run: window b runs only its first lengths[b] rows (1..T), which the steps
  // pack (row = lengths[0] + ... + lengths[b-1] + t; N = their sum). Allowed only where no offset
  // past lengths[b] counts: then every dropped row has zero loss at every step and no kept row
  // reads it (causal; a row's later steps read only its own position), so the loss and the
  // gradients are the full window's (up to summation order). A window that ends inside its T
  // rows thus costs only its real rows; an offset that counts there is an Error.
  const int64_t* lengths = nullptr;  // [B], or null: T rows each

  int64_t rows() const {
    if (!lengths) return batch * seq_len;
    int64_t n = 0;
    for (int64_t b = 0; b < batch; ++b) n += lengths[b];
    return n;
  }
  int64_t span() const { return seq_len + steps; }  // T + S offsets per window
};

// What the forward saves for the backward; reused across calls (buffers keep their capacity).
struct Eagle3Unrolled {
  std::vector<Eagle3StepActs> steps;      // [S]
  std::vector<Eagle3OutputActs> outputs;  // [S]
  std::vector<float> x0;                  // [N, C] fc output
  std::vector<float> e;                   // [N, C] token embeddings of the step being run
  std::vector<int32_t> ids, pos;          // [N] tokens and RoPE positions of that step
  std::vector<float> teacher;             // [S, N, Vd] teacher rows gathered per step
  std::vector<uint8_t> mask;              // [S, N] counted rows per step
  std::vector<float> states;              // [S, N, C] state targets per step (state_weight > 0)
  std::vector<int64_t> len, first;        // [B] rows each window runs, and its first row
  std::vector<float> features;            // [N, F] a ragged window's features, packed
  Eagle3Scratch scratch;
};

struct Eagle3Loss {
  double total = 0;                       // sum_s kTttStepDecay^s * (step_loss[s] +
                                          //   state_weight * state_loss[s])
  std::vector<double> step_loss;          // [S] mean soft-CE over the counted rows of step s
  std::vector<double> state_loss;         // [S] SmoothL1 of the state term (0 without it)
  std::vector<int64_t> counted, correct;  // [S] counted rows; of them, student argmax == teacher's
};

// The forward and the loss; fills `state` for eagle3_unrolled_backward. embed is the target's
// embedding table [V, C] (f32, f16 or bf16); a token outside [0, V) is an Error.
Eagle3Loss eagle3_unrolled_forward(const Eagle3Config& cfg, const Eagle3Weights& w,
                                   const Matrix& embed, const Eagle3Window& window,
                                   Eagle3Unrolled& state, ThreadPool& pool);

// Adds d(total loss)/d(parameter) into every parameter of w except the frozen embedding. state
// and window must be those of the latest eagle3_unrolled_forward.
void eagle3_unrolled_backward(const Eagle3Config& cfg, Eagle3Weights& w, const Eagle3Window& window,
                              Eagle3Unrolled& state, ThreadPool& pool);

// The layer outputs only (no teacher needed): h_s for every step and row, [S, N, C] with
// h_s[row] at (s * N + row) * C. What the inference head must reproduce for the same window.
std::vector<float> eagle3_unrolled_hidden(const Eagle3Config& cfg, const Eagle3Weights& w,
                                          const Matrix& embed, const Eagle3Window& window,
                                          ThreadPool& pool);

}  // namespace eagle2::train
