// Text corpora as train-lm and draft-vocab read them: files and folders of UTF-8 documents.
//
// Contract. Sizes in bytes; paths as given (relative ones against the working directory). Errors:
// eagle2::Error naming the path (missing, not a regular file, larger than the limit, unreadable).
// Ownership: the results are plain values. Threads: no shared state; safe from any thread.
#pragma once

#include <string>
#include <vector>

namespace eagle2::api {

// Files and folders -> files: a folder stands for every regular file below it, sorted by path.
// Error on a missing path or a folder without files.
std::vector<std::string> expand_text_paths(const std::vector<std::string>& paths);

// The whole of one corpus file (a regular file of at most 4 GiB; larger corpora come as folders).
std::string read_corpus_file(const std::string& path);

}  // namespace eagle2::api
