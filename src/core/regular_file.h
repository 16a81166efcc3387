// Opening a file a user named without trusting what it is. Every reader in the engine goes through
// here, so one rule holds everywhere:
//  * Only regular files are read. A FIFO blocks open() and read() forever, a device such as
//    /dev/zero never ends, a directory has no bytes. Symlinks are followed: a symlink to a regular
//    file is fine (Hugging Face caches are made of them).
//  * The check itself cannot block: the file is opened with O_NONBLOCK (open() of a FIFO then
//    returns at once instead of waiting for a writer) and judged by fstat() on that descriptor, so
//    what is checked is exactly what is read (no stat-then-open race).
//  * Formats that carry no length of their own and are read whole into memory have a size limit,
//    checked against fstat() before anything is allocated (read_limit below).
#pragma once

#include <cstdint>
#include <string>

namespace eagle2 {

// A read-only descriptor of a regular file, closed on destruction.
class RegularFile {
 public:
  // Throws Error "<path>: cannot open: <reason>" or "<path>: not a regular file".
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // Hands the descriptor to a new owner (e.g. zlib's gzdopen, which closes it itself).
  int release();

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Size limits for files read whole into memory. Each is far above any honest file of its kind and
// low enough that a wrong or hostile path cannot exhaust memory.
namespace read_limit {
constexpr uint64_t kMiB = uint64_t{1} << 20;
// config.json, model.safetensors.index.json: the largest published indexes are a few MB.
constexpr uint64_t kJson = 64 * kMiB;
// tokenizer.model: Llama 2's is 0.5 MB, a 256 k-piece Gemma model about 4 MB.
constexpr uint64_t kTokenizerModel = 64 * kMiB;
// tokenizer.json: LLaMA-3's is 9 MB, Qwen3's 11 MB, Gemma 3's (262 k entries) 33 MB.
constexpr uint64_t kTokenizerJson = 128 * kMiB;
// draft_vocab.tsv: one short line per vocabulary entry, about 3 MB for 256 k entries.
constexpr uint64_t kDraftVocab = 64 * kMiB;
// A prompt set (MT-bench-style sets are tens of KB); also the limit after gunzip.
constexpr uint64_t kPromptSet = 1024 * kMiB;
// One training or counting corpus file; larger corpora come as a folder of files.
constexpr uint64_t kCorpusFile = 4096 * kMiB;
}  // namespace read_limit

// The whole content of a regular file of at most max_bytes. `what` names the kind of file for the
// limit's message: "<path>: <n> bytes, more than the <limit> MiB allowed for <what>" (the limit
// in bytes when it is not a whole number of MiB).
std::string read_regular_file(const std::string& path, uint64_t max_bytes, const char* what);

// The Error for content that grew past max_bytes while being produced (e.g. decompressed), in the
// same words as read_regular_file's.
[[noreturn]] void fail_too_large(const std::string& path, uint64_t bytes, uint64_t max_bytes,
                                 const char* what);

}  // namespace eagle2
