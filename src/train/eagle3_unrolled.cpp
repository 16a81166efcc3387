#include "train/eagle3_unrolled.h"

#include <algorithm>
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
  if (!win.lengths) return;
  for (int64_t b = 0; b < win.batch; ++b) {
    const int64_t len = win.lengths[b];
    if (len < 1 || len > win.seq_len)
      fail("eagle3 unrolled: window ", b, " runs ", len, " rows (must lie in [1, ", win.seq_len,
           "])");
    // The dropped rows t = len .. T - 1 read the offsets len + 1 .. T + S - 1 at their steps.
    if (need_teacher && len < win.seq_len)
      for (int64_t p = len + 1; p < win.span(); ++p)
        if (win.counted[b * win.span() + p])
          fail("eagle3 unrolled: window ", b, " drops its rows from ", len, " but offset ", p,
               " counts (a dropped row's loss would be lost)");
  }
}

// Which rows run: window b's first len[b] rows, packed from row first[b] (all T without lengths).
// A ragged window's features are gathered into st.features (features_of), which fc reads in
// the forward and the backward.
void layout_rows(const Eagle3Window& win, Eagle3Unrolled& st) {
  st.len.assign(static_cast<size_t>(win.batch), win.seq_len);
  if (win.lengths) st.len.assign(win.lengths, win.lengths + win.batch);
  st.first.resize(static_cast<size_t>(win.batch));
  int64_t row = 0;
  for (int64_t b = 0; b < win.batch; ++b) {
    st.first[b] = row;
    row += st.len[b];
  }
}

const float* features_of(const Eagle3Config& c, const Eagle3Window& win, Eagle3Unrolled& st) {
  if (!win.lengths) return win.features;
  const int64_t F = c.feature_width;
  st.features.resize(static_cast<size_t>(win.rows() * F));
  for (int64_t b = 0; b < win.batch; ++b)
    std::memcpy(st.features.data() + st.first[b] * F, win.features + b * win.seq_len * F,
                static_cast<size_t>(st.len[b] * F) * sizeof(float));
  return st.features.data();
}

// Step s's token ids and positions into state.ids / state.pos, its embeddings into state.e.
void step_inputs(const Eagle3Config& c, const Eagle3Window& win, const Matrix& embed, int64_t s,
                 Eagle3Unrolled& st, ThreadPool& pool) {
  const int64_t T = win.seq_len, N = win.rows();
  st.ids.resize(static_cast<size_t>(N));
  st.pos.resize(static_cast<size_t>(N));
  for (int64_t b = 0; b < win.batch; ++b)
    for (int64_t t = 0; t < st.len[b]; ++t) {
      st.ids[st.first[b] + t] = win.tokens[b * win.span() + t + 1 + s];
      st.pos[st.first[b] + t] = win.positions[b * T + t] + static_cast<int32_t>(s);
    }
  st.e.resize(static_cast<size_t>(N * c.hidden));
  embedding_forward(st.e.data(), st.ids.data(), N, embed, pool);
}

// The layer for every step: fc, then step s on x_s = (s ? h_{s-1} : fc output).
void run_layers(const Eagle3Config& c, const Eagle3Weights& w, const Matrix& embed,
                const Eagle3Window& win, Eagle3Unrolled& st, ThreadPool& pool) {
  const int64_t N = win.rows(), S = win.steps;
  layout_rows(win, st);
  st.x0.resize(static_cast<size_t>(N * c.hidden));
  linear_forward(st.x0.data(), features_of(c, win, st), N, w.fc.matrix(), nullptr, pool);
  st.steps.resize(static_cast<size_t>(S));
  std::vector<Eagle3StepActs*> acts;
  const std::span<const int64_t> lengths =
      win.lengths ? std::span<const int64_t>(st.len) : std::span<const int64_t>();
  for (int64_t s = 0; s < S; ++s) {
    st.steps[s].resize(c, win.batch, win.seq_len, s, lengths);
    acts.push_back(&st.steps[s]);
    step_inputs(c, win, embed, s, st, pool);
    const float* x = s == 0 ? st.x0.data() : st.steps[s - 1].h.data();
    eagle3_layer_forward(c, w, x, st.e.data(), st.pos.data(), acts, pool);
  }
}

float step_weight(int64_t s) {
  return static_cast<float>(std::pow(kTttStepDecay, s));
}

}  // namespace

Eagle3Loss eagle3_unrolled_forward(const Eagle3Config& c, const Eagle3Weights& w,
                                   const Matrix& embed, const Eagle3Window& win, Eagle3Unrolled& st,
                                   ThreadPool& pool) {
  check_window(c, win, embed, true);
  run_layers(c, w, embed, win, st, pool);
  const int64_t N = win.rows(), S = win.steps, V = c.draft_vocab, C = c.hidden;
  const bool with_states = win.state_weight > 0;

  // Step s row (b, t) reads the teacher, the flag (and the state) of offset t + 1 + s.
  st.teacher.resize(static_cast<size_t>(S * N * V));
  st.mask.resize(static_cast<size_t>(S * N));
  st.states.resize(with_states ? static_cast<size_t>(S * N * C) : 0);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t b = 0; b < win.batch; ++b) {
      const int64_t off = b * win.span() + 1 + s, row = s * N + st.first[b], len = st.len[b];
      std::memcpy(st.teacher.data() + row * V, win.teacher + off * V,
                  static_cast<size_t>(len * V) * sizeof(float));
      std::memcpy(st.mask.data() + row, win.counted + off, static_cast<size_t>(len));
      if (with_states)
        std::memcpy(st.states.data() + row * C, win.states + off * C,
                    static_cast<size_t>(len * C) * sizeof(float));
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
    const double sl = with_states
                          ? smooth_l1_forward(st.outputs[s].hn.data(), st.states.data() + s * N * C,
                                              mask, N, C, pool)
                          : 0.0;
    loss.step_loss.push_back(l);
    loss.state_loss.push_back(sl);
    loss.counted.push_back(counted);
    loss.correct.push_back(correct);
    loss.total +=
        static_cast<double>(step_weight(s)) * (l + static_cast<double>(win.state_weight) * sl);
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
      static_cast<int64_t>(st.mask.size()) != S * N ||
      static_cast<int64_t>(st.len.size()) != win.batch ||
      (win.lengths && !std::equal(st.len.begin(), st.len.end(), win.lengths)))
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
                           with_states ? st.states.data() + s * N * C : nullptr, win.state_weight);
    eagle3_layer_backward(c, w, dh.data(), nullptr,
                          std::span<Eagle3StepActs* const>(acts).first(static_cast<size_t>(s + 1)),
                          st.scratch, pool);
  }
  const float* features = win.lengths ? st.features.data() : win.features;
  linear_backward(nullptr, w.fc.grad.data(), nullptr, dh.data(), features, N, w.fc.matrix(), pool);
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
