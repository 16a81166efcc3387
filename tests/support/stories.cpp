#include "support/stories.h"

#include "support/equality_runs.h"
#include "tokenizer/tokenizer.h"

namespace eagle2::test {

Stories load_stories(const std::string& model_cfg, const std::string& head_cfg,
                     const std::string& corpus, size_t n_prompts) {
  Stories s;
  const std::string model_dir = model_cfg.substr(0, model_cfg.rfind('/'));
  s.target = LlamaModel::load(model_dir);
  s.head = EagleHead::load(head_cfg.substr(0, head_cfg.rfind('/')), *s.target);
  auto tok = Tokenizer::load(model_dir + "/tokenizer.model");
  for (const std::string& text : held_out_openings(corpus, n_prompts))
    s.prompts.push_back(tok->encode(text, true));
  return s;
}

}  // namespace eagle2::test
