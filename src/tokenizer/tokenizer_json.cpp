#include "tokenizer/tokenizer_json.h"

#include <cctype>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "core/error.h"
#include "core/regular_file.h"
#include "tokenizer/bpe_tokenizer.h"

namespace eagle2 {

const char* const kGpt2SplitRegex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char* const kLlama3SplitRegex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2SplitRegex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

namespace {

using nlohmann::json;

const char* type_name(const json& v) {
  if (v.is_number_float()) return "a fractional number";
  if (v.is_number()) return "an integer";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_null()) return "null";
  if (v.is_array()) return "a list";
  return "an object";
}

// The bytes of a file, as an iterator type of this file's own. nlohmann-json's lexer and parser
// are templates of their input's type: over std::string's iterators every file that parses a
// string shares one copy, and the linker keeps whichever it meets first. In the sanitizer build
// the copy it kept was slower than this file's own (Qwen3's tokenizer.json: 4.4 against 3.4 s of
// CPU). A type local to this file gives the parser its own copy, compiled here.
struct FileByte {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* at = nullptr;
  reference operator*() const { return *at; }
  FileByte& operator++() {
    ++at;
    return *this;
  }
  FileByte operator++(int) { return FileByte{at++}; }
  bool operator==(const FileByte&) const = default;
};

json parse_file(const std::string& path, uint64_t limit, const char* what) {
  const std::string text = read_regular_file(path, limit, what);
  try {
    json j = json::parse(FileByte{text.data()}, FileByte{text.data() + text.size()});
    if (!j.is_object()) fail(path, ": not a JSON object");
    return j;
  } catch (const json::parse_error& e) {
    fail(path, ": not valid JSON (parse error at byte ", e.byte, ")");
  } catch (const json::exception& e) {
    fail(path, ": not valid JSON (", e.what(), ")");
  }
}

// Field access naming the file and the field in every Error.
struct Fields {
  const std::string& path;

  [[noreturn]] void wrong(const std::string& field, const json& v, const char* expected) const {
    fail(path, ": ", field, " is ", type_name(v), ", expected ", expected);
  }
  const json* find(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  const json& object(const json& obj, const char* key, const std::string& field) const {
    const json* v = find(obj, key);
    if (v == nullptr) fail(path, ": no ", field);
    if (!v->is_object()) wrong(field, *v, "an object");
    return *v;
  }
  std::string string(const json& v, const std::string& field) const {
    if (!v.is_string()) wrong(field, v, "a string");
    return v.get<std::string>();
  }
  std::string string_or(const json& obj, const char* key, const std::string& field,
                        const std::string& fallback) const {
    const json* v = find(obj, key);
    return v == nullptr ? fallback : string(*v, field);
  }
  bool boolean_or(const json& obj, const char* key, const std::string& field, bool fallback) const {
    const json* v = find(obj, key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) wrong(field, *v, "a boolean");
    return v->get<bool>();
  }
  int64_t integer(const json& v, const std::string& field) const {
    if (!v.is_number_integer()) wrong(field, v, "an integer");
    // Ids are int32: anything outside is refused here, before a narrowing cast could wrap it.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT32_MAX)) {
      fail(path, ": ", field, " = ", v.get<uint64_t>(), " is out of range");
    }
    if (v.get<int64_t>() < INT32_MIN)
      fail(path, ": ", field, " = ", v.get<int64_t>(), " is out of range");
    return v.get<int64_t>();
  }
};

// A literal string as a PCRE2 pattern: ASCII punctuation escaped, everything else as is.
std::string escape_literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x80 && !std::isalnum(static_cast<unsigned char>(c)))
      out += '\\';
    out += c;
  }
  return out;
}

// Appends the regexes of a pre-tokenizer. Returns whether a ByteLevel step was seen.
bool read_pre_tokenizer(const Fields& f, const json& p, const std::string& field, BpeSpec& spec) {
  if (!p.is_object()) f.wrong(field, p, "an object");
  const std::string type = f.string_or(p, "type", field + ".type", "");
  if (type == "Sequence") {
    const json* list = f.find(p, "pretokenizers");
    if (list == nullptr || !list->is_array())
      f.wrong(field + ".pretokenizers", list ? *list : json(), "a list");
    bool byte_level = false;
    for (size_t i = 0; i < list->size(); ++i) {
      byte_level |= read_pre_tokenizer(f, (*list)[i],
                                       field + ".pretokenizers[" + std::to_string(i) + "]", spec);
    }
    return byte_level;
  }
  if (type == "Split") {
    const std::string behavior = f.string_or(p, "behavior", field + ".behavior", "");
    if (behavior != "Isolated")
      fail(f.path, ": ", field, " has behavior '", behavior, "'; only Isolated is supported");
    if (f.boolean_or(p, "invert", field + ".invert", false))
      fail(f.path, ": ", field, " is inverted, which is not supported");
    const json& pattern = f.object(p, "pattern", field + ".pattern");
    if (const json* r = f.find(pattern, "Regex")) {
      spec.split_patterns.push_back(f.string(*r, field + ".pattern.Regex"));
    } else if (const json* s = f.find(pattern, "String")) {
      spec.split_patterns.push_back(escape_literal(f.string(*s, field + ".pattern.String")));
    } else {
      fail(f.path, ": ", field, ".pattern has neither Regex nor String");
    }
    return false;
  }
  if (type == "Digits") {
    spec.split_patterns.push_back(
        f.boolean_or(p, "individual_digits", field + ".individual_digits", false) ? "\\p{N}"
                                                                                  : "\\p{N}+");
    return false;
  }
  if (type == "ByteLevel") {
    if (f.boolean_or(p, "add_prefix_space", field + ".add_prefix_space", false)) {
      // Hugging Face adds the space to every piece ByteLevel sees; first in line, that is the text.
      if (!spec.split_patterns.empty()) {
        fail(f.path, ": ", field,
             " adds a prefix space after other splits, which is not supported");
      }
      spec.add_prefix_space = true;
    }
    if (f.boolean_or(p, "use_regex", field + ".use_regex", true))
      spec.split_patterns.push_back(kGpt2SplitRegex);
    return true;
  }
  fail(f.path, ": ", field, " type '", type,
       "' is not supported (Sequence, Split, Digits, ByteLevel are)");
}

void read_normalizer(const Fields& f, const json& n, const std::string& field, BpeSpec& spec) {
  if (n.is_null()) return;
  if (!n.is_object()) f.wrong(field, n, "an object");
  const std::string type = f.string_or(n, "type", field + ".type", "");
  if (type == "NFC") {
    spec.nfc = true;
  } else if (type == "Sequence") {
    const json* list = f.find(n, "normalizers");
    if (list == nullptr || !list->is_array())
      f.wrong(field + ".normalizers", list ? *list : json(), "a list");
    for (size_t i = 0; i < list->size(); ++i) {
      read_normalizer(f, (*list)[i], field + ".normalizers[" + std::to_string(i) + "]", spec);
    }
  } else {
    fail(f.path, ": ", field, " type '", type, "' is not supported (NFC is)");
  }
}

// The content of the first special token the post-processor's single-text template puts before
// the text, or "" (TemplateProcessing alone or inside a Sequence).
std::string template_prefix(const json& p) {
  if (!p.is_object()) return "";
  if (p.value("type", "") == "Sequence" && p.contains("processors") && p["processors"].is_array()) {
    for (const json& q : p["processors"]) {
      if (std::string s = template_prefix(q); !s.empty()) return s;
    }
    return "";
  }
  if (p.value("type", "") != "TemplateProcessing" || !p.contains("single") ||
      !p["single"].is_array() || p["single"].empty())
    return "";
  const json& first = p["single"][0];
  if (first.is_object() && first.contains("SpecialToken") && first["SpecialToken"].is_object()) {
    const json& id = first["SpecialToken"].value("id", json());
    if (id.is_string()) return id.get<std::string>();
  }
  return "";
}

// A tokenizer_config.json token field: a string, {"content": ...} or null.
std::string config_token(const Fields& f, const json& cfg, const char* key) {
  const json* v = f.find(cfg, key);
  if (v == nullptr) return "";
  if (v->is_object()) return f.string(v->value("content", json()), std::string(key) + ".content");
  return f.string(*v, key);
}

int32_t token_id(const BpeSpec& spec, const std::string& content) {
  for (const AddedToken& t : spec.added) {
    if (t.content == content) return t.id;
  }
  for (size_t id = 0; id < spec.vocab.size(); ++id) {
    if (spec.vocab[id] == content) return static_cast<int32_t>(id);
  }
  return -1;
}

}  // namespace

namespace {

// The spec of `path`; nullopt with *sentencepiece set for a SentencePiece-style file when the
// caller can fall back to its tokenizer.model.
std::optional<BpeSpec> read_spec(const std::string& path, bool* sentencepiece) {
  const json j = parse_file(path, read_limit::kTokenizerJson, "a tokenizer.json");
  const Fields f{path};
  BpeSpec spec;
  spec.source = path;

  const json& model = f.object(j, "model", "model");
  const std::string type = f.string_or(model, "type", "model.type", "BPE");
  if (type != "BPE") fail(path, ": model type '", type, "' is not supported (BPE is)");
  bool byte_level = false;
  if (const json* p = f.find(j, "pre_tokenizer"))
    byte_level = read_pre_tokenizer(f, *p, "pre_tokenizer", spec);
  if (!byte_level || f.boolean_or(model, "byte_fallback", "model.byte_fallback", false)) {
    if (sentencepiece != nullptr) {
      *sentencepiece = true;
      return std::nullopt;
    }
    fail(path,
         ": a SentencePiece-style BPE (no ByteLevel pre-tokenizer, or byte_fallback); only "
         "byte-level BPE is supported from tokenizer.json (load the tokenizer.model instead)");
  }
  if (!f.string_or(model, "continuing_subword_prefix", "model.continuing_subword_prefix", "")
           .empty() ||
      !f.string_or(model, "end_of_word_suffix", "model.end_of_word_suffix", "").empty()) {
    fail(path, ": BPE with a subword prefix or suffix is not supported");
  }
  if (const json* d = f.find(model, "dropout");
      d != nullptr && (!d->is_number() || d->get<double>() != 0.0)) {
    fail(path, ": BPE dropout is not supported (it makes encoding random)");
  }
  spec.ignore_merges = f.boolean_or(model, "ignore_merges", "model.ignore_merges", false);
  read_normalizer(f, j.value("normalizer", json()), "normalizer", spec);

  // Added tokens first: they bound the ids the vocabulary may use.
  if (const json* added = f.find(j, "added_tokens")) {
    if (!added->is_array()) f.wrong("added_tokens", *added, "a list");
    for (size_t i = 0; i < added->size(); ++i) {
      const json& a = (*added)[i];
      const std::string field = "added_tokens[" + std::to_string(i) + "]";
      if (!a.is_object()) f.wrong(field, a, "an object");
      AddedToken t;
      t.id = static_cast<int32_t>(f.integer(a.value("id", json()), field + ".id"));
      t.content = f.string(a.value("content", json()), field + ".content");
      t.special = f.boolean_or(a, "special", field + ".special", false);
      t.normalized = f.boolean_or(a, "normalized", field + ".normalized", !t.special);
      t.lstrip = f.boolean_or(a, "lstrip", field + ".lstrip", false);
      t.rstrip = f.boolean_or(a, "rstrip", field + ".rstrip", false);
      if (f.boolean_or(a, "single_word", field + ".single_word", false)) {
        fail(path, ": ", field, " ('", t.content, "') is single_word, which is not supported");
      }
      spec.added.push_back(std::move(t));
    }
  }

  const json& vocab = f.object(model, "vocab", "model.vocab");
  const size_t bound = vocab.size() + spec.added.size();
  spec.vocab.assign(vocab.size(), std::string());
  for (const auto& [entry, id_json] : vocab.items()) {
    const int64_t id = f.integer(id_json, "model.vocab['" + entry + "']");
    if (id < 0 || static_cast<size_t>(id) >= bound) {
      fail(path, ": model.vocab['", entry, "'] = ", id, " is out of range [0, ", bound, ")");
    }
    if (entry.empty()) fail(path, ": model.vocab has an empty entry");
    if (static_cast<size_t>(id) >= spec.vocab.size()) spec.vocab.resize(id + 1);
    if (!spec.vocab[id].empty())
      fail(path, ": model.vocab gives id ", id, " to both '", spec.vocab[id], "' and '", entry,
           "'");
    spec.vocab[id] = entry;
  }

  const json* merges = f.find(model, "merges");
  if (merges == nullptr || !merges->is_array())
    f.wrong("model.merges", merges ? *merges : json(), "a list");
  spec.merges.reserve(merges->size());
  for (size_t r = 0; r < merges->size(); ++r) {
    const json& m = (*merges)[r];
    const std::string field = "model.merges[" + std::to_string(r) + "]";
    if (m.is_array() && m.size() == 2) {
      spec.merges.emplace_back(f.string(m[0], field + "[0]"), f.string(m[1], field + "[1]"));
    } else {
      const std::string s = f.string(m, field);
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        fail(path, ": ", field, " ('", s, "') is not two tokens separated by one space");
      }
      spec.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    }
  }

  if (const json* unk = f.find(model, "unk_token")) {
    const std::string content = f.string(*unk, "model.unk_token");
    spec.unk_id = token_id(spec, content);
    if (spec.unk_id < 0) fail(path, ": model.unk_token '", content, "' is not a token");
  }

  // BOS and EOS: tokenizer_config.json beside the file, when there is one.
  const std::string config =
      (std::filesystem::path(path).parent_path() / "tokenizer_config.json").string();
  std::string bos, eos;
  std::optional<bool> add_bos;
  if (std::filesystem::exists(config)) {
    const json cfg = parse_file(config, read_limit::kJson, "a JSON config");
    const Fields c{config};
    bos = config_token(c, cfg, "bos_token");
    eos = config_token(c, cfg, "eos_token");
    if (c.boolean_or(cfg, "split_special_tokens", "split_special_tokens", false)) {
      // Special tokens written in the text are then plain text: only other added tokens match.
      spec.match_special_in_text = false;
    }
    if (const json* v = c.find(cfg, "add_bos_token")) {
      if (!v->is_boolean()) c.wrong("add_bos_token", *v, "a boolean");
      add_bos = v->get<bool>();
    }
    for (const auto& [name, content, id] :
         {std::tuple{"bos_token", bos, &spec.bos_id}, std::tuple{"eos_token", eos, &spec.eos_id}}) {
      if (content.empty()) continue;
      *id = token_id(spec, content);
      if (*id < 0) fail(config, ": ", name, " '", content, "' is not a token of ", path);
    }
  }
  const std::string prefix = template_prefix(j.value("post_processor", json()));
  spec.add_bos = add_bos.value_or(!prefix.empty() && (bos.empty() || prefix == bos));
  if (spec.add_bos && spec.bos_id < 0 && !prefix.empty()) spec.bos_id = token_id(spec, prefix);
  if (spec.add_bos && spec.bos_id < 0)
    fail(path, ": the model asks for a BOS token but names none");
  return spec;
}

std::optional<BpeSpec> read_spec_checked(const std::string& path, bool* sentencepiece) {
  try {
    return read_spec(path, sentencepiece);
  } catch (const json::exception& e) {
    // The field readers check types before reading; this is the net for a shape they missed.
    fail(path, ": unexpected JSON content (", e.what(), ")");
  }
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& path, bool* sentencepiece) {
  std::optional<BpeSpec> spec = read_spec_checked(path, sentencepiece);
  if (!spec) return nullptr;
  return std::make_unique<BpeTokenizer>(std::move(*spec));
}

BpeSpec load_bpe_spec(const std::string& path) {
  BpeSpec spec = *read_spec_checked(path, nullptr);
  // The same construction checks (merges naming known entries, ids in range, regexes compiling).
  BpeTokenizer check(spec);
  return spec;
}

std::string tokenizer_config_chat_template(const std::string& tokenizer_json) {
  const std::string config =
      (std::filesystem::path(tokenizer_json).parent_path() / "tokenizer_config.json").string();
  if (!std::filesystem::exists(config)) return "";
  const json cfg = parse_file(config, read_limit::kJson, "a JSON config");
  const Fields c{config};
  const json* t = c.find(cfg, "chat_template");
  if (t == nullptr) return "";
  if (t->is_string()) return t->get<std::string>();
  if (t->is_array()) {
    for (const json& named : *t)
      if (named.is_object() && named.value("name", json()) == "default")
        return c.string(named.value("template", json()), "chat_template[default].template");
    fail(config, ": \"chat_template\" lists no template named \"default\"");
  }
  c.wrong("chat_template", *t, "a string or a list of {\"name\", \"template\"}");
}

}  // namespace eagle2
