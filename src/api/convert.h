// Public values <-> the engine's own, field by field. The public structs (include/eagle2/) keep the
// engine's field names and defaults, so each conversion is a plain copy; tests/unit/
// test_public_api.cpp checks that the defaults agree and that conversions round-trip.
#pragma once

#include "bench/bench_runner.h"
#include "bench/prompt_set.h"
#include "eagle2/bench.h"
#include "eagle2/cost.h"
#include "eagle2/drafter.h"
#include "eagle2/generate.h"
#include "eagle2/model.h"
#include "eagle2/prompts.h"
#include "eagle2/train_head.h"
#include "model/cost_curve.h"
#include "model/llama_config.h"
#include "speculative/drafter_spec.h"
#include "speculative/speculative_decoder.h"
#include "train/eagle_head_trainer.h"

namespace eagle2::api {

LlamaConfig to_internal(const ModelConfig& c);
ModelConfig to_public(const LlamaConfig& c);
eagle2::DType to_internal(DType t);

eagle2::DrafterSpec to_internal(const DrafterSpec& s);
DrafterSpec to_public(const eagle2::DrafterSpec& s);

SamplingParams to_internal(const SamplingOptions& s);
GenerationOptions to_internal(const GenerateOptions& o);
Stats to_public(const GenerationStats& s);
Stats to_public(const SpeculativeStats& s);  // the plain part, then the speculative part

eagle2::CostCurveOptions to_internal(const CostCurveOptions& o);
std::vector<CostPoint> to_public(const std::vector<eagle2::CostPoint>& points);

eagle2::PromptSetOptions to_internal(const PromptSetOptions& o);
eagle2::Prompt to_internal(const Prompt& p);
Prompt to_public(const eagle2::Prompt& p);
eagle2::BenchOptions to_internal(const BenchOptions& o);
BenchSummary to_public(const Summary& s);

train::HeadInit to_internal(const HeadInit& i);
train::HeadTrainOptions to_internal(const HeadTrainOptions& o);
train::SelfDistillOptions to_internal(const SelfDistillOptions& o);
HeadLoss to_public(const train::HeadLoss& l);

}  // namespace eagle2::api
