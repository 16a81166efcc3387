// Template text -> tokens, the way the reference (@huggingface/jinja 0.5.11, as Hugging Face
// renders chat templates) reads it: first the whole text is rewritten for Jinja's trim_blocks and
// lstrip_blocks (and the transformers-only {% generation %} tag is dropped), then it is cut into
// text and the tokens inside {{ }}, {% %} and {# #}, where a '-' beside a delimiter strips the
// white space on that side.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eagle2::jinja {

enum class Tok {
  Text,
  Comment,
  OpenStatement,
  CloseStatement,
  OpenExpression,
  CloseExpression,
  Number,
  String,
  Identifier,
  Equals,
  OpenParen,
  CloseParen,
  OpenBracket,
  CloseBracket,
  OpenBrace,
  CloseBrace,
  Comma,
  Dot,
  Colon,
  Pipe,
  Additive,        // + - ~
  Multiplicative,  // * / // %
  Power,           // **
  Comparison,      // < > <= >= == !=
  Unary,           // a lone + or - where no operand precedes it
};

struct Token {
  Tok type;
  std::string value;  // text, literal (escapes resolved), identifier, or operator
  int line;           // 1-based line of the original template
};

// The rewritten text and, for each of its bytes, the byte offset in the original (for lines).
struct Preprocessed {
  std::string text;
  std::vector<uint32_t> origin;
};

// The reference's preprocessing: one trailing newline dropped; spaces and tabs before {% or {# at
// the start of a line dropped (lstrip_blocks); the newline right after %}, #} or -} dropped
// (trim_blocks); {% generation %} and {% endgeneration %} removed.
Preprocessed preprocess(std::string_view source);

// Throws eagle2::Error "NAME:LINE: syntax error: ..." on text it cannot read.
std::vector<Token> tokenize(std::string_view source, std::string_view name);

// The one format of syntax errors, shared with the parser.
[[noreturn]] void syntax_error(std::string_view name, int line, const std::string& what);

// For messages: a token as the reader wrote it ("'%}'", "end of template").
std::string describe(const Token* token);

}  // namespace eagle2::jinja
