// Benchmark prompt sets in the shapes they are published in: JSONL (optionally gzipped) with the
// prompt under "turns" (MT-bench, first turn), "prompt" (HumanEval), "question" (GSM8K) or "text";
// or plain text documents separated by blank lines, from which an opening is taken.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace eagle2 {

struct Prompt {
  std::string id;  // "<file stem>:<index>"
  std::string text;
};

struct PromptSetOptions {
  size_t limit = 0;          // 0 = all
  size_t opening_words = 0;  // text files: first N words of each document (0 = the whole document)
  bool from_end = false;     // take the last documents/lines instead of the first
};

// Errors name the file and line: a malformed JSON line, a line without a prompt field, a corrupt
// gzip stream, an empty set.
std::vector<Prompt> load_prompt_set(const std::string& path, const PromptSetOptions& options);

// Reads a whole file, transparently gunzipping *.gz.
std::string read_maybe_gzip(const std::string& path);

}  // namespace eagle2
