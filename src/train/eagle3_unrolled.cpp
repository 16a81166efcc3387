#include "train/eagle3_unrolled.h"

#include <cmath>
#include <cstring>
#include <span>

#include "core/error.h"
#include "train/embedding.h"
#include "train/linear.h"
#include "train/smooth_l1.h"

namespace eagle2::train {

namespace {

void check_window(const Eagle3Config& c, const Eagle3Window& win, const Matrix& embed,
                  bool need_teacher) {
  if (win.batch < 1 || win.seq_len < 1 || win.steps < 1)
    fail("eagle3 unrolled: bad window B=", win.batch, " T=", win.seq_len, " S=", win.steps,
         " (each must be at least 1)");
  if (!win.features || !win.positions || !win.tokens)
    fail("eagle3 unrolled: the window lacks features, positions or tokens");
  if (need_teacher && (!win.teacher || !win.counted))
    fail("eagle3 unrolled: the loss needs the window's teacher and counted flags");
  if (need_teacher && win.state_weight > 0 && !win.states)
    fail("eagle3 unrolled: a state weight without the window's states");
  if (embed.cols != c.hidden)
    fail("eagle3 unrolled: the embedding is ", embed.cols, " wide, the head ", c.hidden);
}

// Step s's token ids and positions into state.ids / state.pos, its embeddings into state.e.
void step_inputs(const Eagle3Config& c, const Eagle3Window& win, const Matrix& embed, int64_t s,
                 Eagle3Unrolled& st, ThreadPool& pool) {
  const int64_t T = win.seq_len, N = win.rows();
  st.ids.resize(static_cast<size_t>(N));
  st.pos.resize(static_cast<size_t>(N));
  for (int64_t b = 0; b < win.batch; ++b)
    for (int64_t t = 0; t < T; ++t) {
      st.ids[b * T + t] = win.tokens[b * win.span() + t + 1 + s];
      st.pos[b * T + t] = win.positions[b * T + t] + static_cast<int32_t>(s);
    }
  st.e.resize(static_cast<size_t>(N * c.hidden));
  embedding_forward(st.e.data(), st.ids.data(), N, embed, pool);
}

// The layer for every step: fc, then step s on x_s = (s ? h_{s-1} : fc output).
void run_layers(const Eagle3Config& c, const Eagle3Weights& w, const Matrix& embed,
                const Eagle3Window& win, Eagle3Unrolled& st, ThreadPool& pool) {
  const int64_t N = win.rows(), S = win.steps;
  st.x0.resize(static_cast<size_t>(N * c.hidden));
  linear_forward(st.x0.data(), win.features, N, w.fc.matrix(), nullptr, pool);
  st.steps.resize(static_cast<size_t>(S));
  std::vector<Eagle3StepActs*> acts;
  for (int64_t s = 0; s < S; ++s) {
    st.steps[s].resize(c, win.batch, win.seq_len, s);
    acts.push_back(&st.steps[s]);
    step_inputs(c, win, embed, s, st, pool);
    const float* x = s == 0 ? st.x0.data() : st.steps[s - 1].h.data();
    eagle3_layer_forward(c, w, x, st.e.data(), st.pos.data(), acts, pool);
  }
}

float step_weight(int64_t s) { return static_cast<float>(std::pow(kTttStepDecay, s)); }

}  // namespace

Eagle3Loss eagle3_unrolled_forward(const Eagle3Config& c, const Eagle3Weights& w,
                                   const Matrix& embed, const Eagle3Window& win,
                                   Eagle3Unrolled& st, ThreadPool& pool) {
  check_window(c, win, embed, true);
  run_layers(c, w, embed, win, st, pool);
  const int64_t T = win.seq_len, N = win.rows(), S = win.steps, V = c.draft_vocab, C = c.hidden;
  const bool with_states = win.state_weight > 0;

  // Step s row (b, t) reads the teacher, the flag (and the state) of offset t + 1 + s.
  st.teacher.resize(static_cast<size_t>(S * N * V));
  st.mask.resize(static_cast<size_t>(S * N));
  st.states.resize(with_states ? static_cast<size_t>(S * N * C) : 0);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t b = 0; b < win.batch; ++b) {
      const int64_t off = b * win.span() + 1 + s;
      std::memcpy(st.teacher.data() + (s * N + b * T) * V, win.teacher + off * V,
                  static_cast<size_t>(T * V) * sizeof(float));
      std::memcpy(st.mask.data() + s * N + b * T, win.counted + off, static_cast<size_t>(T));
      if (with_states)
        std::memcpy(st.states.data() + (s * N + b * T) * C, win.states + off * C,
                    static_cast<size_t>(T * C) * sizeof(float));
    }

  Eagle3Loss loss;
  st.outputs.resize(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) {
    const uint8_t* mask = st.mask.data() + s * N;
    int64_t correct = 0;
    const double l =
        eagle3_output_forward(c, w, st.steps[s].h.data(), st.teacher.data() + s * N * V, mask, N,
                              st.outputs[s], &correct, pool);
    int64_t counted = 0;
    for (int64_t m = 0; m < N; ++m) counted += mask[m] != 0;
    const double sl = with_states ? smooth_l1_forward(st.outputs[s].hn.data(),
                                                      st.states.data() + s * N * C, mask, N, C,
                                                      pool)
                                  : 0.0;
    loss.step_loss.push_back(l);
    loss.state_loss.push_back(sl);
    loss.counted.push_back(counted);
    loss.correct.push_back(correct);
    loss.total += static_cast<double>(step_weight(s)) *
                  (l + static_cast<double>(win.state_weight) * sl);
  }
  return loss;
}

void eagle3_unrolled_backward(const Eagle3Config& c, Eagle3Weights& w, const Eagle3Window& win,
                              Eagle3Unrolled& st, ThreadPool& pool) {
  const int64_t N = win.rows(), S = win.steps, V = c.draft_vocab, C = c.hidden;
  const bool with_states = win.state_weight > 0;
  if (with_states && static_cast<int64_t>(st.states.size()) != S * N * C)
    fail("eagle3 unrolled: backward with a state weight the forward did not have");
  if (static_cast<int64_t>(st.steps.size()) != S || static_cast<int64_t>(st.outputs.size()) != S ||
      static_cast<int64_t>(st.mask.size()) != S * N)
    fail("eagle3 unrolled: backward without the forward of this window");
  std::vector<Eagle3StepActs*> acts;
  for (Eagle3StepActs& a : st.steps) acts.push_back(&a);

  // dh: dL/dh_s, starting with what step s+1 sent back through its hidden input (none for the
  // last step); the layer's backward turns it into dL/dx_s = dL/dh_{s-1}, and at s = 0 into
  // dL/d(fc output).
  std::vector<float> dh(static_cast<size_t>(N * c.hidden), 0.0f);
  for (int64_t s = S - 1; s >= 0; --s) {
    eagle3_output_backward(c, w, dh.data(), st.steps[s].h.data(), st.teacher.data() + s * N * V,
                           st.mask.data() + s * N, N, st.outputs[s], step_weight(s), pool,
                           with_states ? st.states.data() + s * N * C : nullptr,
                           win.state_weight);
    eagle3_layer_backward(c, w, dh.data(), nullptr,
                          std::span<Eagle3StepActs* const>(acts).first(static_cast<size_t>(s + 1)),
                          st.scratch, pool);
  }
  linear_backward(nullptr, w.fc.grad.data(), nullptr, dh.data(), win.features, N, w.fc.matrix(),
                  pool);
}

std::vector<float> eagle3_unrolled_hidden(const Eagle3Config& c, const Eagle3Weights& w,
                                          const Matrix& embed, const Eagle3Window& win,
                                          ThreadPool& pool) {
  check_window(c, win, embed, false);
  Eagle3Unrolled st;
  run_layers(c, w, embed, win, st, pool);
  const int64_t NC = win.rows() * c.hidden;
  std::vector<float> out(static_cast<size_t>(win.steps * NC));
  for (int64_t s = 0; s < win.steps; ++s)
    std::memcpy(out.data() + s * NC, st.steps[s].h.data(), static_cast<size_t>(NC) * sizeof(float));
  return out;
}

}  // namespace eagle2::train
