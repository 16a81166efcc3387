#include "chat/jinja_lexer.h"

#include <algorithm>

#include "chat/jinja_text.h"
#include "core/error.h"

namespace eagle2::jinja {

void syntax_error(std::string_view name, int line, const std::string& what) {
  fail(name, ":", line, ": syntax error: ", what);
}

std::string describe(const Token* token) {
  if (!token) return "the end of the template";
  switch (token->type) {
    case Tok::Text:
      return "text";
    case Tok::Comment:
      return "a comment";
    case Tok::String:
      return "a string";
    case Tok::Number:
      return "the number " + token->value;
    case Tok::Identifier:
      return "'" + token->value + "'";
    default:
      return "'" + token->value + "'";
  }
}

namespace {

struct Builder {
  Preprocessed out;
  void push(char c, uint32_t origin) {
    out.text += c;
    out.origin.push_back(origin);
  }
};

bool starts_with(std::string_view s, size_t i, std::string_view prefix) {
  return s.substr(std::min(i, s.size())).substr(0, prefix.size()) == prefix;
}

// Where the regex /^/m matches: the start, and after \n, \r, U+2028 and U+2029.
bool at_line_start(std::string_view s, size_t i) {
  if (i == 0) return true;
  if (s[i - 1] == '\n' || s[i - 1] == '\r') return true;
  return i >= 3 && s.substr(i - 3, 2) == "\xE2\x80" && (s[i - 1] == '\xA8' || s[i - 1] == '\xA9');
}

Preprocessed lstrip_blocks(const Preprocessed& in) {
  Builder b;
  const std::string_view s = in.text;
  size_t i = 0;
  while (i < s.size()) {
    if (at_line_start(s, i)) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j > i && j + 1 < s.size() && s[j] == '{' &&
          (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-'))
        i = j;  // drop the indentation before the block tag
    }
    b.push(s[i], in.origin[i]);
    ++i;
  }
  return b.out;
}

Preprocessed trim_blocks(const Preprocessed& in) {
  Builder b;
  const std::string_view s = in.text;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' &&
        s[i + 2] == '\n') {
      b.push(s[i], in.origin[i]);
      b.push(s[i + 1], in.origin[i + 1]);
      i += 3;  // the newline after a block tag goes
      continue;
    }
    b.push(s[i], in.origin[i]);
    ++i;
  }
  return b.out;
}

size_t skip_spaces(std::string_view s, size_t i) {
  while (size_t n = space_at(s, i)) i += n;
  return i;
}

// {%-? (end)?generation -?%} at s[i]: the end of the tag and which sides strip.
bool generation_tag(std::string_view s, size_t i, size_t* end, bool* lstrip, bool* rstrip) {
  if (!starts_with(s, i, "{%")) return false;
  size_t p = i + 2;
  *lstrip = p < s.size() && s[p] == '-';
  if (*lstrip) ++p;
  p = skip_spaces(s, p);
  if (starts_with(s, p, "endgeneration")) {
    p += 13;
  } else if (starts_with(s, p, "generation")) {
    p += 10;
  } else {
    return false;
  }
  p = skip_spaces(s, p);
  *rstrip = p < s.size() && s[p] == '-';
  if (*rstrip) ++p;
  if (!starts_with(s, p, "%}")) return false;
  *end = p + 2;
  return true;
}

// Drops the transformers-only {% generation %} tags. Like the reference's regex replace, the
// white space around a tag stays unless that side of the tag has '-'.
Preprocessed drop_generation(const Preprocessed& in) {
  Builder b;
  const std::string_view s = in.text;
  size_t i = 0;
  size_t run_out = std::string::npos;  // output size where the current white space run began
  while (i < s.size()) {
    size_t end = 0;
    bool lstrip = false, rstrip = false;
    if (s[i] == '{' && generation_tag(s, i, &end, &lstrip, &rstrip)) {
      if (lstrip && run_out != std::string::npos) {
        b.out.text.resize(run_out);
        b.out.origin.resize(run_out);
      }
      const size_t after = skip_spaces(s, end);
      if (!rstrip)
        for (size_t k = end; k < after; ++k) b.push(s[k], in.origin[k]);
      i = after;
      run_out = std::string::npos;  // the white space after a tag is not before the next one
      continue;
    }
    if (const size_t n = space_at(s, i)) {
      if (run_out == std::string::npos) run_out = b.out.text.size();
      for (size_t k = 0; k < n; ++k) b.push(s[i + k], in.origin[i + k]);
      i += n;
      continue;
    }
    run_out = std::string::npos;
    b.push(s[i], in.origin[i]);
    ++i;
  }
  return b.out;
}

}  // namespace

Preprocessed preprocess(std::string_view source) {
  Preprocessed p;
  if (!source.empty() && source.back() == '\n') source.remove_suffix(1);
  p.text.assign(source);
  p.origin.resize(source.size());
  for (size_t i = 0; i < source.size(); ++i) p.origin[i] = static_cast<uint32_t>(i);
  return drop_generation(trim_blocks(lstrip_blocks(p)));
}

}  // namespace eagle2::jinja

namespace eagle2::jinja {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// The reference's table, in its order (longer operators before their prefixes).
struct Fixed {
  std::string_view text;
  Tok type;
};
constexpr Fixed kFixed[] = {
    {"{%", Tok::OpenStatement},  {"%}", Tok::CloseStatement},
    {"{{", Tok::OpenExpression}, {"}}", Tok::CloseExpression},
    {"(", Tok::OpenParen},       {")", Tok::CloseParen},
    {"{", Tok::OpenBrace},       {"}", Tok::CloseBrace},
    {"[", Tok::OpenBracket},     {"]", Tok::CloseBracket},
    {",", Tok::Comma},           {".", Tok::Dot},
    {":", Tok::Colon},           {"|", Tok::Pipe},
    {"<=", Tok::Comparison},     {">=", Tok::Comparison},
    {"==", Tok::Comparison},     {"!=", Tok::Comparison},
    {"<", Tok::Comparison},      {">", Tok::Comparison},
    {"+", Tok::Additive},        {"-", Tok::Additive},
    {"~", Tok::Additive},        {"**", Tok::Power},
    {"*", Tok::Multiplicative},  {"//", Tok::Multiplicative},
    {"/", Tok::Multiplicative},  {"%", Tok::Multiplicative},
    {"=", Tok::Equals},
};

class Lexer {
 public:
  Lexer(std::string_view source, std::string_view name) : name_(name), pre_(preprocess(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < source.size(); ++i)
      if (source[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    const std::string_view s = pre_.text;
    while (pos_ < s.size()) {
      const Tok* last = tokens_.empty() ? nullptr : &tokens_.back().type;
      if (!last || *last == Tok::CloseStatement || *last == Tok::CloseExpression ||
          *last == Tok::Comment) {
        const size_t start = pos_;
        while (pos_ < s.size() &&
               !(s[pos_] == '{' && pos_ + 1 < s.size() &&
                 (s[pos_ + 1] == '%' || s[pos_ + 1] == '{' || s[pos_ + 1] == '#')))
          ++pos_;
        if (pos_ > start) {
          push(Tok::Text, std::string(s.substr(start, pos_ - start)), start);
          continue;
        }
      }
      if (s.substr(pos_, 2) == "{#") {
        comment();
        continue;
      }
      if (s.substr(pos_, 3) == "{%-" || s.substr(pos_, 3) == "{{-") {
        strip_last_text();
        const bool statement = s[pos_ + 1] == '%';
        push(statement ? Tok::OpenStatement : Tok::OpenExpression, statement ? "{%" : "{{", pos_);
        if (!statement) curly_ = 0;
        pos_ += 3;
        continue;
      }
      pos_ = skip_spaces(s, pos_);  // white space inside a tag separates tokens only
      if (pos_ >= s.size()) break;
      if (s.substr(pos_, 3) == "-%}" || s.substr(pos_, 3) == "-}}") {
        const bool statement = s[pos_ + 1] == '%';
        push(statement ? Tok::CloseStatement : Tok::CloseExpression, statement ? "%}" : "}}", pos_);
        pos_ = skip_spaces(s, pos_ + 3);
        continue;
      }
      const char c = s[pos_];
      if ((c == '-' || c == '+') && sign_is_unary()) {
        unary_sign(c);
        continue;
      }
      if (fixed()) continue;
      if (c == '\'' || c == '"') {
        string_literal(c);
        continue;
      }
      if (is_digit(c)) {
        number("");
        continue;
      }
      if (is_word(c)) {
        const size_t start = pos_;
        while (pos_ < s.size() && is_word(s[pos_])) ++pos_;
        push(Tok::Identifier, std::string(s.substr(start, pos_ - start)), start);
        continue;
      }
      size_t n = 0;
      code_point_at(s, pos_, &n);
      error_at(pos_, "unexpected character '" + std::string(s.substr(pos_, n)) + "'");
    }
    return std::move(tokens_);
  }

 private:
  int line_at(size_t pos) const {
    const uint32_t origin = pos < pre_.origin.size() ? pre_.origin[pos]
                            : pre_.origin.empty()    ? 0
                                                     : pre_.origin.back() + 1;
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), origin);
    return static_cast<int>(it - line_starts_.begin());
  }
  [[noreturn]] void error_at(size_t pos, const std::string& what) const {
    syntax_error(name_, line_at(pos), what);
  }
  void push(Tok type, std::string value, size_t pos) {
    tokens_.push_back(Token{type, std::move(value), line_at(pos)});
  }

  // {%- {{- {#- strip the white space at the end of the text before them.
  void strip_last_text() {
    if (tokens_.empty() || tokens_.back().type != Tok::Text) return;
    std::string& text = tokens_.back().value;
    text.resize(trim_end(text).size());
    if (text.empty()) tokens_.pop_back();
  }

  void comment() {
    const std::string_view s = pre_.text;
    const size_t open = pos_;
    pos_ += 2;
    const bool strip_before = pos_ < s.size() && s[pos_] == '-';
    if (strip_before) ++pos_;
    const size_t close = s.find("#}", pos_);
    if (close == std::string_view::npos) error_at(open, "a comment {# is never closed with #}");
    const bool strip_after = close > pos_ && s[close - 1] == '-';
    if (strip_before) strip_last_text();
    push(Tok::Comment, "", open);
    pos_ = close + 2;
    if (strip_after) pos_ = skip_spaces(s, pos_);
  }

  // A + or - is a sign (not an operator) unless an operand ends right before it.
  bool sign_is_unary() const {
    if (tokens_.empty() || tokens_.back().type == Tok::Text)
      error_at(pos_, std::string("unexpected character '") + pre_.text[pos_] + "'");
    switch (tokens_.back().type) {
      case Tok::Identifier:
      case Tok::Number:
      case Tok::String:
      case Tok::CloseParen:
      case Tok::CloseBracket:
        return false;
      default:
        return true;
    }
  }

  void unary_sign(char sign) {
    const size_t start = pos_++;
    if (pos_ < pre_.text.size() && is_digit(pre_.text[pos_])) {
      number(std::string(1, sign), start);
    } else {
      push(Tok::Unary, std::string(1, sign), start);
    }
  }

  void number(std::string text, size_t start = std::string::npos) {
    const std::string_view s = pre_.text;
    if (start == std::string::npos) start = pos_;
    while (pos_ < s.size() && is_digit(s[pos_])) text += s[pos_++];
    // A fraction, unless this number follows a dot (x.0.1 is two lookups).
    const bool after_dot = !tokens_.empty() && tokens_.back().type == Tok::Dot;
    if (!after_dot && pos_ + 1 < s.size() && s[pos_] == '.' && is_digit(s[pos_ + 1])) {
      text += s[pos_++];
      while (pos_ < s.size() && is_digit(s[pos_])) text += s[pos_++];
    }
    push(Tok::Number, std::move(text), start);
  }

  bool fixed() {
    for (const Fixed& f : kFixed) {
      if (f.type == Tok::CloseExpression && curly_ > 0) continue;  // }} closing nested literals
      if (pre_.text.substr(pos_, f.text.size()) != f.text) continue;
      push(f.type, std::string(f.text), pos_);
      if (f.type == Tok::OpenExpression) curly_ = 0;
      if (f.type == Tok::OpenBrace) ++curly_;
      if (f.type == Tok::CloseBrace) --curly_;
      pos_ += f.text.size();
      return true;
    }
    return false;
  }

  void string_literal(char quote) {
    const std::string_view s = pre_.text;
    const size_t start = pos_++;
    std::string value;
    char32_t pending_high = 0;  // a \uD8xx waiting for its low half
    auto flush_high = [&] {
      if (pending_high) append_utf8(value, 0xFFFD);
      pending_high = 0;
    };
    while (true) {
      if (pos_ >= s.size()) error_at(start, "a string is never closed");
      const char c = s[pos_];
      if (c == quote) break;
      if (c != '\\') {
        flush_high();
        value += c;
        ++pos_;
        continue;
      }
      if (++pos_ >= s.size()) error_at(start, "a string is never closed");
      const char e = s[pos_++];
      if (e == 'x' || e == 'u') {
        const size_t digits = e == 'x' ? 2 : 4;
        const std::string_view hex = s.substr(pos_, digits);
        if (hex.size() != digits ||
            hex.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
          error_at(start, "invalid escape \\" + std::string(1, e) + std::string(hex));
        const auto unit = static_cast<char32_t>(std::stoul(std::string(hex), nullptr, 16));
        pos_ += digits;
        if (unit >= 0xDC00 && unit <= 0xDFFF && pending_high) {
          append_utf8(value, 0x10000 + ((pending_high - 0xD800) << 10) + (unit - 0xDC00));
          pending_high = 0;
          continue;
        }
        flush_high();
        if (unit >= 0xD800 && unit <= 0xDBFF)
          pending_high = unit;
        else
          append_utf8(value, unit);
        continue;
      }
      flush_high();
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'v':
          value += '\v';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case '\\':
          value += '\\';
          break;
        default: {
          size_t n = 0;
          code_point_at(s, pos_ - 1, &n);
          error_at(start,
                   "unknown escape \\" + std::string(s.substr(pos_ - 1, n)) + " in a string");
        }
      }
    }
    flush_high();
    ++pos_;  // the closing quote
    push(Tok::String, std::move(value), start);
  }

  std::string_view name_;
  Preprocessed pre_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int curly_ = 0;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, std::string_view name) {
  if (!valid_utf8(source)) fail(name, ": the template is not valid UTF-8");
  return Lexer(source, name).run();
}

}  // namespace eagle2::jinja
