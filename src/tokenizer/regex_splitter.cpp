#include "tokenizer/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace eagle2 {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

// A JIT stack for the rare text whose matches outgrow the default 32 KiB one (e.g. a run of a
// million spaces under \s+(?!\S)); made only when needed, then kept for the call.
struct JitStack {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ~JitStack() {
    if (context) pcre2_match_context_free(context);
    if (stack) pcre2_jit_stack_free(stack);
  }
  pcre2_match_context* get() {
    if (context == nullptr) {
      stack = pcre2_jit_stack_create(64 * 1024, 256 * 1024 * 1024, nullptr);
      context = pcre2_match_context_create(nullptr);
      if (stack == nullptr || context == nullptr)
        fail("tokenizer: out of memory for the regex stack");
      pcre2_jit_stack_assign(context, nullptr, stack);
    }
    return context;
  }
};

}  // namespace

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() {
    if (code) pcre2_code_free(code);
  }
};

RegexSplitter::RegexSplitter(const std::vector<std::string>& patterns, const std::string& source)
    : patterns_(patterns) {
  for (const std::string& p : patterns) {
    if (first_invalid_utf8(p) != std::string::npos) {
      fail(source, ": pre-tokenizer regex is not valid UTF-8");
    }
    int err = 0;
    PCRE2_SIZE at = 0;
    auto c = std::make_unique<Compiled>();
    c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), PCRE2_UTF | PCRE2_UCP,
                            &err, &at, nullptr);
    if (c->code == nullptr) {
      fail(source, ": pre-tokenizer regex '", p, "' does not compile: ", pcre2_message(err),
           " at offset ", at);
    }
    // JIT is an optimization: where it is unavailable the interpreter gives the same matches.
    (void)pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);
    compiled_.push_back(std::move(c));
  }
}

RegexSplitter::RegexSplitter() = default;
RegexSplitter::~RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& out) const {
  if (text.empty()) return;
  if (compiled_.empty()) {
    out.push_back(text);
    return;
  }
  std::vector<std::string_view> pieces{text}, next;
  JitStack jit;
  for (size_t r = 0; r < compiled_.size(); ++r) {
    pcre2_code* code = compiled_[r]->code;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
    if (md == nullptr) fail("tokenizer: out of memory for regex matches");
    std::vector<std::string_view>& dest = r + 1 == compiled_.size() ? out : next;
    for (std::string_view piece : pieces) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
      size_t start = 0, emitted = 0;
      while (start < piece.size()) {
        int rc = pcre2_match(code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
          rc = pcre2_match(code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK, md, jit.get());
        }
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          pcre2_match_data_free(md);
          fail("tokenizer: pre-tokenizer regex '", patterns_[r], "' failed: ", pcre2_message(rc));
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t b = ov[0], e = ov[1];
        if (e == b) {  // an empty match splits nothing: move on by one character
          start = b + utf8_sequence_length(static_cast<unsigned char>(piece[b]));
          continue;
        }
        if (b > emitted) dest.push_back(piece.substr(emitted, b - emitted));
        dest.push_back(piece.substr(b, e - b));
        emitted = start = e;
      }
      if (emitted < piece.size()) dest.push_back(piece.substr(emitted));
    }
    pcre2_match_data_free(md);
    if (&dest == &next) {
      pieces.swap(next);
      next.clear();
    }
  }
}

}  // namespace eagle2
