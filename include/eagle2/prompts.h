// Prompt sets in the shapes they are published in: JSONL (optionally gzipped) with the prompt
// under "turns" (MT-bench, first turn), "prompt" (HumanEval), "question" (GSM8K) or "text"; or
// plain text documents separated by blank lines, of which an opening can be taken.
//
// Contract. Ownership: the prompts are copied out as plain values; no file stays open. Errors:
// eagle2::Error naming the file and line (listed at load_prompt_set); unreadable or missing files
// too. Threads: no shared state; safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace eagle2::api {

struct Prompt {
  std::string id;  // "<file stem>:<index>"
  std::string text;
};

struct PromptSetOptions {
  size_t limit = 0;          // 0 = all
  size_t opening_words = 0;  // text files: the first N words of each document (0 = all of it)
  bool from_end = false;     // the last documents/lines instead of the first
};

// Errors name the file and line: a malformed JSON line, a line without a prompt, a corrupt gzip
// stream, an empty set.
std::vector<Prompt> load_prompt_set(const std::string& path, const PromptSetOptions& options);

struct PromptSet {
  std::string name;
  std::vector<Prompt> prompts;
};

}  // namespace eagle2::api
