#include "quantize/bpe_gguf_vocab.h"

#include <algorithm>

#include "core/error.h"
#include "quantize/llama_gguf_metadata.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace eagle2 {

namespace {

// llama.cpp's token types (llama_token_type).
constexpr int32_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

// The converter's does_token_look_special: added tokens some models forget to mark special.
bool looks_special(const std::string& t) {
  if (t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]") return true;
  if (t.starts_with("<|") && t.ends_with("|>") && t.size() >= 4) return true;
  // Full-width bars (DeepSeek): "<｜" ... "｜>".
  if (t.starts_with("<\xEF\xBD\x9C") && t.ends_with("\xEF\xBD\x9C>") && t.size() >= 8) return true;
  return t.starts_with("<unused") && t.ends_with(">");
}

std::string pre_name(const BpeSpec& s) {
  const auto only = [&](const char* regex) {
    return s.split_patterns.size() == 1 && s.split_patterns[0] == regex;
  };
  if (only(kLlama3SplitRegex) && s.ignore_merges) return "llama-bpe";
  if (only(kQwen2SplitRegex) && !s.ignore_merges) return "qwen2";
  if (only(kGpt2SplitRegex) && !s.ignore_merges) return "gpt-2";
  fail(s.source,
       ": its pre-tokenizer is not one llama.cpp names (LLaMA-3's, Qwen2's and GPT-2's are "
       "written to GGUF)");
}

// A merge as the converter writes it: the two parts joined by a space, a space inside a part
// (possible in the newer list form) written as U+0120, the byte-level alphabet's space.
std::string merge_text(const std::string& a, const std::string& b) {
  std::string out;
  for (const std::string* part : {&a, &b}) {
    if (!out.empty()) out += ' ';
    for (char c : *part) {
      if (c == ' ')
        out += "\xC4\xA0";
      else
        out += c;
    }
  }
  return out;
}

}  // namespace

BpeGgufVocab bpe_gguf_vocab(const std::string& tokenizer_json, int64_t vocab_size) {
  const BpeSpec s = load_bpe_spec(tokenizer_json);
  BpeGgufVocab v;
  v.source = tokenizer_json;
  v.pre = pre_name(s);
  if (s.add_prefix_space)
    fail(tokenizer_json, ": ByteLevel adds a prefix space, which llama.cpp's \"", v.pre,
         "\" tokenizer does not");
  int64_t ids = static_cast<int64_t>(s.vocab.size());
  for (const AddedToken& a : s.added) ids = std::max<int64_t>(ids, int64_t{a.id} + 1);
  if (ids > vocab_size)
    fail(tokenizer_json, ": the tokenizer has ids up to ", ids - 1, " but vocab_size is ",
         vocab_size, " (a byte-level BPE vocabulary cannot be cut)");
  v.tokens.resize(static_cast<size_t>(vocab_size));
  v.types.assign(static_cast<size_t>(vocab_size), kUnused);
  for (size_t id = 0; id < s.vocab.size(); ++id) {
    if (s.vocab[id].empty()) continue;
    v.tokens[id] = s.vocab[id];
    v.types[id] = kNormal;
  }
  // Added tokens hold their ids over the model's vocabulary, as in Hugging Face's get_vocab().
  for (const AddedToken& a : s.added) {
    v.tokens[static_cast<size_t>(a.id)] = a.content;
    v.types[static_cast<size_t>(a.id)] =
        a.special || looks_special(a.content) ? kControl : kUserDefined;
  }
  for (int64_t id = 0; id < vocab_size; ++id)
    if (v.types[static_cast<size_t>(id)] == kUnused)
      v.tokens[static_cast<size_t>(id)] = "[PAD" + std::to_string(id) + "]";
  v.merges.reserve(s.merges.size());
  for (const auto& [a, b] : s.merges) v.merges.push_back(merge_text(a, b));
  v.bos_id = s.bos_id;
  v.eos_id = s.eos_id;
  v.unk_id = s.unk_id;
  v.add_bos = s.add_bos;
  v.chat_template = tokenizer_config_chat_template(tokenizer_json);
  return v;
}

void add_bpe_vocab(GgufWriter& w, const BpeGgufVocab& v, const LlamaConfig& c) {
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", v.pre);
  w.add_string_array("tokenizer.ggml.tokens", v.tokens);
  w.add_i32_array("tokenizer.ggml.token_type", v.types);
  w.add_string_array("tokenizer.ggml.merges", v.merges);
  const auto n = static_cast<int64_t>(v.tokens.size());
  auto id_key = [&](const char* key, int64_t id) { add_token_id_key(w, v.source, key, id, n); };
  id_key("tokenizer.ggml.bos_token_id", v.bos_id >= 0 ? v.bos_id : c.bos_token_id);
  id_key("tokenizer.ggml.eos_token_id", v.eos_id >= 0             ? v.eos_id
                                        : c.eos_token_ids.empty() ? -1
                                                                  : c.eos_token_ids.front());
  id_key("tokenizer.ggml.unknown_token_id", v.unk_id);
  w.add_bool("tokenizer.ggml.add_bos_token", v.add_bos);
  if (!v.chat_template.empty()) w.add_string("tokenizer.chat_template", v.chat_template);
}

}  // namespace eagle2
