// Tokenizer encoding speed on one core, one benchmark per tokenizer kind, over 1 MB of mixed text
// built deterministically: 40% code (this repository's src/ files), 40% prose (../shared's
// TinyStories and WikiText-2), 20% CJK (sentences drawn with SplitMix64 from the CJK characters of
// ../shared/golden's reference texts, so that no word repeats wholesale).
//
//   build/bin/bench_tokenizers
// Counter: bytes_per_second (of input text). Needs ../shared (or $EAGLE2_SHARED) for the models.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/splitmix64.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;
constexpr size_t kTextBytes = size_t{1} << 20;

std::string shared_dir() {
  if (const char* env = std::getenv("EAGLE2_SHARED"); env && *env) return env;
  return (fs::path(EAGLE2_SOURCE_DIR).parent_path() / "shared").string();
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// s cut to at most n bytes, on a character boundary.
std::string cut(std::string s, size_t n) {
  if (s.size() <= n) return s;
  s.resize(n);
  s.resize(complete_utf8_prefix(s));
  return s;
}

std::string code_part(size_t n) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(EAGLE2_SOURCE_DIR) / "src")) {
    if (e.is_regular_file() && (e.path().extension() == ".cpp" || e.path().extension() == ".h"))
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto& f : files) {
    if (out.size() >= n) break;
    out += read(f);
  }
  return cut(out, n);
}

std::string prose_part(size_t n) {
  const std::string stories =
      read(fs::path(shared_dir()) / "data/corpora/tinystories_valid_head.txt");
  const std::string wiki = read(fs::path(shared_dir()) / "data/corpora/wikitext-2/valid.txt");
  return cut(cut(stories, n / 2) + cut(wiki, n - n / 2), n);
}

std::string cjk_part(size_t n) {
  // The CJK code points (U+3000..U+9FFF, U+FF00..U+FFEF) of the reference texts.
  const std::string golden = read(fs::path(shared_dir()) / "golden/bpe_tokenizers.json") +
                             read(fs::path(shared_dir()) / "golden/chat_templates.json");
  std::set<std::string> pool;
  for (size_t i = 0; i + 2 < golden.size(); ++i) {
    const auto c = static_cast<unsigned char>(golden[i]);
    if (c >= 0xE3 && c <= 0xE9) pool.insert(golden.substr(i, 3));
  }
  const std::vector<std::string> chars(pool.begin(), pool.end());
  if (chars.empty()) return std::string();
  uint64_t state = 2026;
  std::string out;
  while (out.size() < n) {
    const int len = 4 + static_cast<int>(splitmix64_next(state) % 24);
    for (int i = 0; i < len; ++i) out += chars[splitmix64_next(state) % chars.size()];
    out += splitmix64_next(state) % 3 ? "\xEF\xBC\x8C" : "\xE3\x80\x82\n";  // ，or 。
  }
  return cut(out, n);
}

const std::string& mixed_text() {
  static const std::string text = [] {
    std::string t = code_part(kTextBytes * 2 / 5) + prose_part(kTextBytes * 2 / 5);
    t += cjk_part(kTextBytes - t.size());
    return t;
  }();
  return text;
}

void encode(benchmark::State& state, const std::string& relpath) {
  const std::string path = relpath.rfind("models/", 0) == 0
                               ? std::string(EAGLE2_SOURCE_DIR) + "/" + relpath
                               : shared_dir() + "/" + relpath;
  if (!fs::exists(path)) {
    state.SkipWithError(("missing " + path).c_str());
    return;
  }
  const auto tok = load_tokenizer(path);
  const std::string& text = mixed_text();
  size_t tokens = 0;
  for (auto _ : state) {
    const auto ids = tok->encode(text, false);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["text_bytes"] = static_cast<double>(text.size());
  state.counters["tokens"] = static_cast<double>(tokens);
}

BENCHMARK_CAPTURE(encode, bpe_tokenizer_json_llama3,
                  std::string("data/tokenizers/llama3/tokenizer.json"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(encode, bpe_tokenizer_json_qwen3,
                  std::string("data/tokenizers/qwen3/tokenizer.json"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(encode, bpe_gguf_gpt2, std::string("data/gguf_vocab/ggml-vocab-gpt-2.gguf"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(encode, bpe_gguf_deepseek_coder,
                  std::string("data/gguf_vocab/ggml-vocab-deepseek-coder.gguf"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(encode, spm_gguf_llama, std::string("data/gguf_vocab/ggml-vocab-llama-spm.gguf"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(encode, sentencepiece_model_llama2,
                  std::string("data/models/llama2_tokenizer/tokenizer.model"))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace eagle2

BENCHMARK_MAIN();
