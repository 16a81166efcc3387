#include "api/convert.h"

namespace eagle2::api {

namespace {

eagle2::RopeScaling to_internal(RopeScaling s) {
  switch (s) {
    case RopeScaling::None:
      return eagle2::RopeScaling::None;
    case RopeScaling::Linear:
      return eagle2::RopeScaling::Linear;
    case RopeScaling::Llama3:
      return eagle2::RopeScaling::Llama3;
  }
  return eagle2::RopeScaling::None;
}

RopeScaling to_public(eagle2::RopeScaling s) {
  switch (s) {
    case eagle2::RopeScaling::None:
      return RopeScaling::None;
    case eagle2::RopeScaling::Linear:
      return RopeScaling::Linear;
    case eagle2::RopeScaling::Llama3:
      return RopeScaling::Llama3;
  }
  return RopeScaling::None;
}

}  // namespace

LlamaConfig to_internal(const ModelConfig& c) {
  LlamaConfig o;
  o.architecture = c.architecture;
  o.hidden_size = c.hidden_size;
  o.intermediate_size = c.intermediate_size;
  o.num_layers = c.num_layers;
  o.num_heads = c.num_heads;
  o.num_kv_heads = c.num_kv_heads;
  o.head_dim = c.head_dim;
  o.vocab_size = c.vocab_size;
  o.max_position_embeddings = c.max_position_embeddings;
  o.rms_norm_eps = c.rms_norm_eps;
  o.rope_theta = c.rope_theta;
  o.rope_scaling = to_internal(c.rope_scaling);
  o.rope_factor = c.rope_factor;
  o.rope_low_freq_factor = c.rope_low_freq_factor;
  o.rope_high_freq_factor = c.rope_high_freq_factor;
  o.rope_original_max_position = c.rope_original_max_position;
  o.tie_word_embeddings = c.tie_word_embeddings;
  o.attention_bias = c.attention_bias;
  o.bos_token_id = c.bos_token_id;
  o.eos_token_ids = c.eos_token_ids;
  o.sliding_window = c.sliding_window;
  o.num_experts = c.num_experts;
  o.num_experts_used = c.num_experts_used;
  o.expert_intermediate_size = c.expert_intermediate_size;
  o.norm_topk_prob = c.norm_topk_prob;
  return o;
}

ModelConfig to_public(const LlamaConfig& c) {
  ModelConfig o;
  o.architecture = c.architecture;
  o.hidden_size = c.hidden_size;
  o.intermediate_size = c.intermediate_size;
  o.num_layers = c.num_layers;
  o.num_heads = c.num_heads;
  o.num_kv_heads = c.num_kv_heads;
  o.head_dim = c.head_dim;
  o.vocab_size = c.vocab_size;
  o.max_position_embeddings = c.max_position_embeddings;
  o.rms_norm_eps = c.rms_norm_eps;
  o.rope_theta = c.rope_theta;
  o.rope_scaling = to_public(c.rope_scaling);
  o.rope_factor = c.rope_factor;
  o.rope_low_freq_factor = c.rope_low_freq_factor;
  o.rope_high_freq_factor = c.rope_high_freq_factor;
  o.rope_original_max_position = c.rope_original_max_position;
  o.tie_word_embeddings = c.tie_word_embeddings;
  o.attention_bias = c.attention_bias;
  o.bos_token_id = c.bos_token_id;
  o.eos_token_ids = c.eos_token_ids;
  o.sliding_window = c.sliding_window;
  o.num_experts = c.num_experts;
  o.num_experts_used = c.num_experts_used;
  o.expert_intermediate_size = c.expert_intermediate_size;
  o.norm_topk_prob = c.norm_topk_prob;
  return o;
}

eagle2::DType to_internal(DType t) {
  switch (t) {
    case DType::F32:
      return eagle2::DType::F32;
    case DType::F16:
      return eagle2::DType::F16;
    case DType::BF16:
      return eagle2::DType::BF16;
  }
  return eagle2::DType::F32;
}

eagle2::DrafterSpec to_internal(const DrafterSpec& s) {
  eagle2::DrafterSpec o;
  o.label = s.label;
  o.kind = s.kind;
  o.dynamic.top_k = s.dynamic.top_k;
  o.dynamic.depth = s.dynamic.depth;
  o.dynamic.total_tokens = s.dynamic.total_tokens;
  o.dynamic.ranking = s.dynamic.ranking == DynamicTreeParams::Ranking::OwnConfidence
                          ? eagle2::DynamicTreeParams::Ranking::OwnConfidence
                          : eagle2::DynamicTreeParams::Ranking::Value;
  o.dynamic.rerank = s.dynamic.rerank;
  o.auto_budget = s.auto_budget;
  o.chain_depth = s.chain_depth;
  o.lookup_depth = s.lookup_depth;
  o.calibrate = s.calibrate;
  o.choices = s.choices;
  o.folder = s.folder;
  o.sps_depth = s.sps_depth;
  o.sps_top_k = s.sps_top_k;
  o.lookahead.window = s.lookahead.window;
  o.lookahead.ngram_size = s.lookahead.ngram_size;
  o.lookahead.verify_ngrams = s.lookahead.verify_ngrams;
  o.suffix.tokens = s.suffix.tokens;
  o.suffix.depth = s.suffix.depth;
  o.suffix.min_percent = s.suffix.min_percent;
  o.with_suffix = s.with_suffix;
  o.heads_tokens = s.heads_tokens;
  o.head = s.head;
  return o;
}

DrafterSpec to_public(const eagle2::DrafterSpec& s) {
  DrafterSpec o;
  o.label = s.label;
  o.kind = s.kind;
  o.dynamic.top_k = s.dynamic.top_k;
  o.dynamic.depth = s.dynamic.depth;
  o.dynamic.total_tokens = s.dynamic.total_tokens;
  o.dynamic.ranking = s.dynamic.ranking == eagle2::DynamicTreeParams::Ranking::OwnConfidence
                          ? DynamicTreeParams::Ranking::OwnConfidence
                          : DynamicTreeParams::Ranking::Value;
  o.dynamic.rerank = s.dynamic.rerank;
  o.auto_budget = s.auto_budget;
  o.chain_depth = s.chain_depth;
  o.lookup_depth = s.lookup_depth;
  o.calibrate = s.calibrate;
  o.choices = s.choices;
  o.folder = s.folder;
  o.sps_depth = s.sps_depth;
  o.sps_top_k = s.sps_top_k;
  o.lookahead.window = s.lookahead.window;
  o.lookahead.ngram_size = s.lookahead.ngram_size;
  o.lookahead.verify_ngrams = s.lookahead.verify_ngrams;
  o.suffix.tokens = s.suffix.tokens;
  o.suffix.depth = s.suffix.depth;
  o.suffix.min_percent = s.suffix.min_percent;
  o.with_suffix = s.with_suffix;
  o.heads_tokens = s.heads_tokens;
  o.head = s.head;
  return o;
}

SamplingParams to_internal(const SamplingOptions& s) {
  SamplingParams o;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  o.seed = s.seed;
  return o;
}

GenerationOptions to_internal(const GenerateOptions& o) {
  GenerationOptions g;  // prefill_chunk: the engine's default
  g.max_new_tokens = o.max_new_tokens;
  g.sampling = to_internal(o.sampling);
  g.stop_at_eos = o.stop_at_eos;
  g.logprobs = o.logprobs;
  g.test_fault = static_cast<GenerationOptions::TestFault>(o.test_fault);
  g.test_fault_after_cycles = o.test_fault_after_cycles;
  return g;
}

Stats to_public(const GenerationStats& s) {
  Stats o;
  o.prompt_tokens = s.prompt_tokens;
  o.new_tokens = s.new_tokens;
  o.target_forwards = s.target_forwards;
  o.prefill_seconds = s.prefill_seconds;
  o.decode_seconds = s.decode_seconds;
  o.prefill_tokens_per_second = s.prefill_tokens_per_second();
  o.decode_tokens_per_second = s.decode_tokens_per_second();
  o.stopped_at_eos = s.stopped_at_eos;
  o.stopped_at_context = s.stopped_at_context;
  return o;
}

Stats to_public(const SpeculativeStats& s) {
  Stats o = to_public(static_cast<const GenerationStats&>(s));
  o.cycles = s.cycles;
  o.accept_histogram = s.accept_histogram;
  o.drafted_tokens = s.drafted_tokens;
  o.head_drafted = s.head_drafted;
  o.head_accepted = s.head_accepted;
  o.suffix_drafted = s.suffix_drafted;
  o.suffix_accepted = s.suffix_accepted;
  static_assert(Stats::kDepthBins == eagle2::SpeculativeStats::kDepthBins);
  o.drafted_by_depth = s.drafted_by_depth;
  o.accepted_by_depth = s.accepted_by_depth;
  o.draft_seconds = s.draft_seconds;
  o.verify_seconds = s.verify_seconds;
  o.other_seconds = s.other_seconds();
  o.tau = s.tau();
  return o;
}

eagle2::CostCurveOptions to_internal(const CostCurveOptions& o) {
  eagle2::CostCurveOptions c;
  c.ks = o.ks;
  c.context = o.context;
  c.repetitions = o.repetitions;
  c.tree = o.tree;
  return c;
}

std::vector<CostPoint> to_public(const std::vector<eagle2::CostPoint>& points) {
  std::vector<CostPoint> out;
  out.reserve(points.size());
  for (const eagle2::CostPoint& p : points) out.push_back({p.k, p.seconds, p.relative, p.experts});
  return out;
}

eagle2::PromptSetOptions to_internal(const PromptSetOptions& o) {
  eagle2::PromptSetOptions p;
  p.limit = o.limit;
  p.opening_words = o.opening_words;
  p.from_end = o.from_end;
  return p;
}

eagle2::Prompt to_internal(const Prompt& p) {
  return {p.id, p.text};
}
Prompt to_public(const eagle2::Prompt& p) {
  return {p.id, p.text};
}

eagle2::BenchOptions to_internal(const BenchOptions& o) {
  eagle2::BenchOptions b;
  b.repetitions = o.repetitions;
  b.max_new_tokens = o.max_new_tokens;
  b.temperatures = o.temperatures;
  b.seed = o.seed;
  b.ctx = o.ctx;
  b.warmup_prompts = o.warmup_prompts;
  return b;
}

BenchSummary to_public(const Summary& s) {
  BenchSummary o;
  o.prompt_set = s.prompt_set;
  o.drafter = s.drafter;
  o.temperature = s.temperature;
  o.runs = s.runs;
  o.new_tokens = s.new_tokens;
  o.cycles = s.cycles;
  o.decode_seconds = s.decode_seconds;
  o.draft_seconds = s.draft_seconds;
  o.verify_seconds = s.verify_seconds;
  o.tokens_per_second = s.tokens_per_second;
  o.speedup = s.speedup;
  o.tau = s.tau;
  o.draft_share = s.draft_share;
  o.verify_share = s.verify_share;
  o.distinct4 = s.distinct4;
  o.drafted_tokens = s.drafted_tokens;
  o.tree_tokens = s.tree_tokens;
  return o;
}

train::HeadInit to_internal(const HeadInit& i) {
  return {i.seed, i.fc_identity};
}

train::HeadTrainOptions to_internal(const HeadTrainOptions& o) {
  train::HeadTrainOptions t;
  t.steps = o.steps;
  t.batch = o.batch;
  t.seq_len = o.seq_len;
  t.lr = o.lr;
  t.warmup = o.warmup;
  t.min_lr_ratio = o.min_lr_ratio;
  t.noise = o.noise;
  t.noise_relative = o.noise_relative;
  t.weight_decay = o.weight_decay;
  t.clip_norm = o.clip_norm;
  t.ce_weight = o.ce_weight;
  t.ce_temperature = o.ce_temperature;
  t.seed = o.seed;
  return t;
}

train::SelfDistillOptions to_internal(const SelfDistillOptions& o) {
  train::SelfDistillOptions s;
  s.max_new_tokens = o.max_new_tokens;
  s.greedy = o.greedy;
  s.sampled_per_prompt = o.sampled_per_prompt;
  s.seed = o.seed;
  s.max_tokens = o.max_tokens;
  s.feature_layers = o.feature_layers;
  return s;
}

HeadLoss to_public(const train::HeadLoss& l) {
  return {l.total, l.smooth_l1, l.soft_ce};
}

}  // namespace eagle2::api
