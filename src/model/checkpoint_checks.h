// Binding and checking a checkpoint's tensors, shared by the loaders of target models
// (llama_model.cpp) and EAGLE draft heads (eagle_head.cpp), so that both bind a decoder layer the
// same way and refuse the same things with the same words.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace eagle2 {

// True for tensors a checkpoint may carry that hold nothing the engine needs.
bool is_ignorable_checkpoint_tensor(const std::string& name);

// The first tensor (in name order) that is neither in `used` nor ignorable; nullptr when none.
// A loader calls it after binding every weight it needs: a leftover tensor means the checkpoint
// and config.json disagree (say, about the number of layers), which would otherwise go unnoticed.
const TensorView* first_unused_tensor(const std::map<std::string, TensorView>& tensors,
                                      const std::set<std::string>& used);

// t itself, or Error "<file>: tensor '<name>' has dtype I64, expected floating-point weights (...)"
// when it holds integers (an index tensor where a weight is needed).
const TensorView& require_float(const TensorView& t);

// A stored [rows, cols] tensor used in place as a weight matrix (Error unless floating-point).
Matrix as_matrix(const TensorView& t);

// A stored tensor converted to floats (norm weights and biases, which are small; Error unless
// floating-point).
std::vector<float> to_f32(const TensorView& t);

// Error "<where>: tensor '<name>' has a non-finite value (v) at element i" unless every value of
// t is finite. Draft weights are scanned at load (EAGLE, Medusa and Hydra heads): one NaN or inf
// makes every draft log-prob NaN, which would reach tree ranking and calibration; they are small.
void require_finite(const TensorView& t, const std::string& where, const std::string& name);

// The seven projections of one LLaMA decoder layer.
struct DecoderProjections {
  Matrix wq, wk, wv, wo, w_gate, w_up, w_down;
};

// Finds a tensor by name and checks its shape (each loader has its own lookup and bookkeeping).
using TensorLookup =
    std::function<const TensorView&(const std::string& name, const std::vector<int64_t>& shape)>;

// The projections under `prefix` ("model.layers.3." for a target, "layers.0." for a head), for a
// layer of width d, q width qd, key/value width kvd and MLP width I (0: no dense MLP, a
// mixture-of-experts layer, model/moe_ffn.h: bind_moe_weights). q/k/v read attn_in columns
// (0: d, the stream itself; an EAGLE-3 head's read 2d, its [embedding | hidden] input).
DecoderProjections bind_decoder_projections(const TensorLookup& take, const std::string& prefix,
                                            int64_t d, int64_t qd, int64_t kvd, int64_t I,
                                            int64_t attn_in = 0);

}  // namespace eagle2
