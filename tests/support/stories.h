// The stories260K model with its EAGLE head and held-out prompts from ../shared, loaded the same
// way by every test that runs a real model end to end.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "draft/eagle_head.h"
#include "model/llama_model.h"
#include "support/shared_data.h"

namespace eagle2::test {

struct Stories {
  std::unique_ptr<LlamaModel> target;
  std::unique_ptr<EagleHead> head;
  std::vector<std::vector<int32_t>> prompts;  // held-out openings, with BOS
};

// From the paths of the model's and the head's config.json and of the story corpus.
Stories load_stories(const std::string& model_cfg, const std::string& head_cfg,
                     const std::string& corpus, size_t n_prompts);

}  // namespace eagle2::test

// Declares `Stories var` with n_prompts prompts, or skips the test when ../shared is absent.
#define EAGLE2_STORIES(var, n_prompts)                                            \
  EAGLE2_SHARED_FILE(model_cfg, "data/models/stories260K-hf/config.json");        \
  EAGLE2_SHARED_FILE(head_cfg, "data/models/stories260K-eagle-head/config.json"); \
  EAGLE2_SHARED_FILE(corpus, "data/corpora/tinystories_valid_head.txt");          \
  ::eagle2::test::Stories var = ::eagle2::test::load_stories(model_cfg, head_cfg, corpus, n_prompts)
