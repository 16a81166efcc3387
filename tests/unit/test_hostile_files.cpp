// Files that are not what their name says: FIFOs, devices, oversized files, symlinks. Every reader
// in the engine must refuse them with one line and never block or read without end.
//
// A reader that regressed would hang on a FIFO, so each load runs in a forked child with a generous
// timeout (a hang detector, not a speed claim): a hang fails the test instead of stalling the
// suite.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/prompt_set.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/mapped_file.h"
#include "core/regular_file.h"
#include "draft/draft_vocab.h"
#include "draft/medusa_heads.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"
#include "model/llama_config.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/medusa_heads.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "tokenizer/sp_trainer.h"
#include "tokenizer/tokenizer.h"
#include "train/train_lm.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

constexpr int kHangSeconds = 60;

struct Outcome {
  bool timed_out = false;
  std::string error;  // the Error's message; "(no error)" if it returned, "(crashed)" if it died
};

// Runs `load` in a forked child and returns what it threw, killing it after kHangSeconds.
Outcome run_bounded(const std::function<void()>& load) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {false, "(pipe failed)"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::string message = "(no error)";
    try {
      load();
    } catch (const Error& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("(non-Error exception) ") + e.what();
    }
    (void)!::write(pipe_fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  Outcome out;
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kHangSeconds);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      out.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child closed its end: done
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (out.timed_out) return out;
  out.error = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? got : "(crashed)";
  return out;
}

// The message `load` fails with; a hang or anything but an Error fails the test.
std::string bounded_error(const std::function<void()>& load) {
  const Outcome o = run_bounded(load);
  EXPECT_FALSE(o.timed_out) << "the loader hung for " << kHangSeconds << " s";
  return o.error;
}

void make_fifo(const std::string& path) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path;
}

// A sparse file of `size` bytes: as large as a limit needs, without writing it.
void make_sparse(const std::string& path, uint64_t size) {
  test::write_file(path, "");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0) << path;
}

std::string tiny_config_json() {
  return test::tiny_config().to_json();
}

TEST(HostileFiles, FifoModelFilesAreRefusedWithoutBlocking) {
  const std::string dir = test::temp_dir("hostile_fifo_model");
  make_fifo(dir + "/model.safetensors");
  EXPECT_EQ(bounded_error([&] { TensorStore::open_dir(dir); }),
            dir + "/model.safetensors: not a regular file");
  EXPECT_EQ(bounded_error([&] { MappedFile m(dir + "/model.safetensors"); }),
            dir + "/model.safetensors: not a regular file");
  make_fifo(dir + "/config.json");
  EXPECT_EQ(bounded_error([&] { LlamaConfig::load(dir + "/config.json"); }),
            dir + "/config.json: not a regular file");
}

TEST(HostileFiles, FifoIndexAndShardAreRefusedWithoutBlocking) {
  const std::string dir = test::temp_dir("hostile_fifo_shard");
  const std::string index = dir + "/model.safetensors.index.json";
  make_fifo(index);
  EXPECT_EQ(bounded_error([&] { TensorStore::open_dir(dir); }), index + ": not a regular file");
  fs::remove(index);
  test::write_file(index, R"({"weight_map": {"a": "s1.safetensors"}})");
  make_fifo(dir + "/s1.safetensors");
  EXPECT_EQ(bounded_error([&] { TensorStore::open_dir(dir); }),
            dir + "/s1.safetensors: not a regular file");
}

TEST(HostileFiles, FifoTorchCheckpointIsRefused) {
  const std::string dir = test::temp_dir("hostile_fifo_torch");
  make_fifo(dir + "/pytorch_model.bin");
  EXPECT_EQ(bounded_error([&] { TorchCheckpoint c(dir + "/pytorch_model.bin"); }),
            dir + "/pytorch_model.bin: not a regular file");
}

TEST(HostileFiles, TokenizerFifoAndDeviceAreRefused) {
  const std::string dir = test::temp_dir("hostile_tokenizer");
  make_fifo(dir + "/fifo.model");
  EXPECT_EQ(bounded_error([&] { Tokenizer::load(dir + "/fifo.model"); }),
            dir + "/fifo.model: not a regular file");
  // /dev/zero would read without end: refused as a device before a byte is read.
  ASSERT_EQ(::symlink("/dev/zero", (dir + "/tokenizer.model").c_str()), 0);
  EXPECT_EQ(bounded_error([&] { Tokenizer::load(dir + "/tokenizer.model"); }),
            dir + "/tokenizer.model: not a regular file");
  EXPECT_EQ(bounded_error([&] { Tokenizer::load(dir); }), dir + ": not a regular file");
}

TEST(HostileFiles, DraftVocabAndPromptFifosAreRefused) {
  const std::string dir = test::temp_dir("hostile_small_files");
  make_fifo(dir + "/draft_vocab.tsv");
  EXPECT_EQ(bounded_error([&] { read_draft_vocab(dir + "/draft_vocab.tsv", 96); }),
            dir + "/draft_vocab.tsv: not a regular file");
  for (const char* name : {"/prompts.jsonl", "/prompts.jsonl.gz", "/prompts.txt"}) {
    make_fifo(dir + name);
    EXPECT_EQ(bounded_error([&] { load_prompt_set(dir + name, PromptSetOptions{}); }),
              dir + name + ": not a regular file");
  }
}

// Medusa and Hydra head folders: a FIFO as config.json or as the weights is refused, unread.
TEST(HostileFiles, MedusaHeadFifosAreRefused) {
  auto target = test::load_random_model("hostile-medusa", test::tiny_config());
  for (const bool hydra : {false, true}) {
    test::RandomHeadsOptions o;
    o.hydra = hydra;
    const std::string dir = test::write_random_heads("hostile-fifo", *target, o);
    const auto kind = hydra ? MedusaHeads::Kind::Hydra : MedusaHeads::Kind::Medusa;
    fs::remove(dir + "/config.json");
    make_fifo(dir + "/config.json");
    EXPECT_EQ(bounded_error([&] { MedusaHeads::load(dir, *target, kind); }),
              dir + "/config.json: not a regular file");
    fs::remove(dir + "/config.json");
    fs::copy_file(test::write_random_heads("hostile-cfg", *target, o) + "/config.json",
                  dir + "/config.json");
    fs::remove(dir + "/model.safetensors");
    make_fifo(dir + "/model.safetensors");
    EXPECT_EQ(bounded_error([&] { MedusaHeads::load(dir, *target, kind); }),
              dir + "/model.safetensors: not a regular file");
  }
}

TEST(HostileFiles, CorpusAndTrainingFifosAreRefused) {
  const std::string dir = test::temp_dir("hostile_corpus");
  make_fifo(dir + "/corpus.txt");
  EXPECT_EQ(
      bounded_error([&] { train_sentencepiece({dir + "/corpus.txt"}, dir + "/t.model", {}); }),
      dir + "/corpus.txt: not a regular file");
  EXPECT_EQ(bounded_error([&] { train::TrainLmConfig::load(dir + "/corpus.txt"); }),
            dir + "/corpus.txt: not a regular file");
  EAGLE2_SHARED_FILE(tokenizer, "data/models/stories260K-hf/tokenizer.model");
  EXPECT_EQ(bounded_error([&] { train::tokenize_files(tokenizer, {dir + "/corpus.txt"}); }),
            dir + "/corpus.txt: not a regular file");
  // The draft-vocab command reads its corpus in the CLI itself.
  const std::string model = fs::path(tokenizer).parent_path().string();
  const test::CliRun run = test::run_cli_split(
      "draft-vocab -m " + model + " --corpus " + dir + "/corpus.txt -o " + dir + "/v.tsv",
      kHangSeconds);
  ASSERT_FALSE(run.timed_out);
  EXPECT_EQ(run.err, "error: " + dir + "/corpus.txt: not a regular file\n");
}

TEST(HostileFiles, SymlinksToRegularFilesStillLoad) {
  // Hugging Face caches are symlinks into ../../blobs: the rule is about the target, not the link.
  const std::string dir = test::temp_dir("hostile_symlinks");
  fs::create_directories(dir + "/blobs");
  fs::create_directories(dir + "/snapshot");
  test::write_file(dir + "/blobs/config", tiny_config_json());
  ASSERT_EQ(::symlink("../blobs/config", (dir + "/snapshot/config.json").c_str()), 0);
  EXPECT_EQ(LlamaConfig::load(dir + "/snapshot/config.json").hidden_size,
            test::tiny_config().hidden_size);
  const float v = 2.5f;
  write_safetensors(dir + "/blobs/weights", {{"a", DType::F32, {1}, &v}});
  ASSERT_EQ(::symlink("../blobs/weights", (dir + "/snapshot/s1.safetensors").c_str()), 0);
  test::write_file(dir + "/snapshot/model.safetensors.index.json",
                   R"({"weight_map": {"a": "s1.safetensors"}})");
  const TensorStore store = TensorStore::open_dir(dir + "/snapshot");
  EXPECT_EQ(*static_cast<const float*>(store.get("a").data), 2.5f);
}

TEST(HostileFiles, OversizedFilesAreRefusedByTheirLimit) {
  // Sparse files: the size is what fstat says, nothing is written or read.
  const std::string dir = test::temp_dir("hostile_oversized");
  const uint64_t over = read_limit::kJson + 1;
  make_sparse(dir + "/config.json", over);
  EXPECT_EQ(bounded_error([&] { LlamaConfig::load(dir + "/config.json"); }),
            dir + "/config.json: 67108865 bytes, more than the 64 MiB allowed for a JSON config");
  make_sparse(dir + "/model.safetensors.index.json", over);
  EXPECT_EQ(bounded_error([&] { TensorStore::open_dir(dir); }),
            dir +
                "/model.safetensors.index.json: 67108865 bytes, more than the 64 MiB allowed "
                "for a JSON index");
  make_sparse(dir + "/tokenizer.model", read_limit::kTokenizerModel + 1);
  EXPECT_EQ(bounded_error([&] { Tokenizer::load(dir + "/tokenizer.model"); }),
            dir +
                "/tokenizer.model: 67108865 bytes, more than the 64 MiB allowed for a "
                "tokenizer.model");
  make_sparse(dir + "/draft_vocab.tsv", read_limit::kDraftVocab + 1);
  EXPECT_EQ(bounded_error([&] { read_draft_vocab(dir + "/draft_vocab.tsv", 96); }),
            dir +
                "/draft_vocab.tsv: 67108865 bytes, more than the 64 MiB allowed for a "
                "draft_vocab.tsv");
  make_sparse(dir + "/prompts.txt", read_limit::kPromptSet + 1);
  EXPECT_EQ(
      bounded_error([&] { load_prompt_set(dir + "/prompts.txt", PromptSetOptions{}); }),
      dir + "/prompts.txt: 1073741825 bytes, more than the 1024 MiB allowed for a prompt file");
}

TEST(HostileFiles, ReadRegularFileReadsExactlyTheFile) {
  const std::string dir = test::temp_dir("hostile_read_regular");
  test::write_file(dir + "/a", std::string("x\0y", 3));
  EXPECT_EQ(read_regular_file(dir + "/a", 3, "a test file"), std::string("x\0y", 3));
  EXPECT_EQ(test::error_of([&] { read_regular_file(dir + "/a", 2, "a test file"); }),
            dir + "/a: 3 bytes, more than the 2 bytes allowed for a test file");
  EXPECT_EQ(test::error_of([&] { read_regular_file(dir + "/none", 2, "a test file"); }),
            dir + "/none: cannot open: No such file or directory");
}

std::string u64_le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

TEST(HostileSafetensors, ShardPathsMustStayInTheModelFolder) {
  const std::string dir = test::temp_dir("hostile_shard_paths");
  const std::string index = dir + "/model.safetensors.index.json";
  for (const std::string shard : {"/etc/passwd", "../x.safetensors", "a/../../x", ""}) {
    test::write_file(index, R"({"weight_map": {"w": ")" + shard + R"("}})");
    const std::string error = test::error_of([&] { TensorStore::open_dir(dir); });
    EXPECT_EQ(error, index + ": weight_map entry 'w' names shard '" + shard +
                         "' outside the model folder (absolute paths and '..' are refused)");
    // Nothing of another file is read, so none of its bytes can appear as a "header length".
    EXPECT_EQ(error.find("header length"), std::string::npos) << error;
  }
}

TEST(HostileSafetensors, DuplicateNamesAreRefused) {
  const std::string dir = test::temp_dir("hostile_duplicates");
  const std::string path = dir + "/m.safetensors";
  const std::string entry = R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  auto open_error = [&](const std::string& header) {
    test::write_file(path, u64_le(header.size()) + header + std::string(4, '\0'));
    return test::error_of([&] { SafetensorsFile f(path); });
  };
  EXPECT_EQ(open_error(R"({"w": )" + entry + R"(, "w": )" + entry + "}"),
            path + ": header has two entries named 'w'");
  EXPECT_EQ(open_error(R"({"__metadata__": {"k": "1", "k": "2"}, "w": )" + entry + "}"),
            path + ": header has two entries named 'k'");
  // Equal keys in different objects are fine.
  const std::string ok = R"({"__metadata__": {"w": "1"}, "w": )" + entry + "}";
  test::write_file(path, u64_le(ok.size()) + ok + std::string(4, '\0'));
  EXPECT_EQ(SafetensorsFile(path).metadata().at("w"), "1");

  const std::string index = dir + "/model.safetensors.index.json";
  test::write_file(index, R"({"weight_map": {"w": "m.safetensors", "w": "n.safetensors"}})");
  EXPECT_EQ(test::error_of([&] { TensorStore::open_dir(dir); }),
            index + ": index has two entries named 'w'");
}

// A header not padded to 8 bytes leaves every tensor misaligned. The reader must copy those into
// aligned memory (reading them in place is undefined behaviour, which the sanitizer pass catches)
// while an aligned file stays zero-copy.
TEST(HostileSafetensors, UnpaddedHeaderLoadsTheSameValuesAligned) {
  const std::string dir = test::temp_dir("hostile_unpadded");
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 4.0f, -5.5f, 6.0f};
  const std::vector<float> c = {7.0f, -8.0f};
  const std::vector<uint16_t> h = {f32_to_f16(0.5f), f32_to_f16(-1.0f), f32_to_f16(2.0f)};
  const std::string aligned_path = dir + "/aligned.safetensors";
  write_safetensors(aligned_path, {{"a", DType::F32, {2, 3}, a.data()},
                                   {"c", DType::F32, {2}, c.data()},
                                   {"h", DType::F16, {3}, h.data()}});
  const std::string bytes = test::read_file(aligned_path);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(bytes[i]);
  std::string header = bytes.substr(8, len);
  header.erase(header.find_last_not_of(' ') + 1);
  while (header.size() % 8 != 1) header += ' ';  // data starts at an odd offset
  const std::string unpadded_path = dir + "/unpadded.safetensors";
  test::write_file(unpadded_path, u64_le(header.size()) + header + bytes.substr(8 + len));

  const SafetensorsFile aligned(aligned_path), unpadded(unpadded_path);
  const auto& at = aligned.tensors();
  const auto& ut = unpadded.tensors();
  // In place: the two F32 tensors lie 24 bytes apart in the file, and so in memory.
  EXPECT_EQ(static_cast<const char*>(at.at("c").data) - static_cast<const char*>(at.at("a").data),
            24);
  for (const char* name : {"a", "c", "h"}) {
    const TensorView& v = ut.at(name);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % dtype_size(v.dtype), 0u) << name;
  }
  // Typed reads: each would be a misaligned load without the copy.
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(static_cast<const float*>(ut.at("a").data)[i], a[i]);
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_EQ(static_cast<const float*>(ut.at("c").data)[i], c[i]);
  for (size_t i = 0; i < h.size(); ++i)
    EXPECT_EQ(static_cast<const uint16_t*>(ut.at("h").data)[i], h[i]);
}

TEST(HostileSafetensors, HeaderOverTheFormatLimitIsRefused) {
  // A sparse file large enough to hold the claimed header, mapped in place: nothing is read.
  const std::string dir = test::temp_dir("hostile_header_limit");
  const std::string path = dir + "/m.safetensors";
  test::write_file(path, u64_le(100'000'001));
  ASSERT_EQ(::truncate(path.c_str(), 8 + 100'000'001), 0);
  EXPECT_EQ(bounded_error([&] {
              ::setenv("EAGLE2_WEIGHTS", "mmap", 1);  // in the forked child only
              SafetensorsFile f(path);
            }),
            path + ": header length 100000001 exceeds the format's limit of 100000000 bytes");
}

// The CLI end to end: a FIFO where the weights should be is one clean error line, not a hang.
TEST(HostileFiles, CliRefusesAFifoModel) {
  const std::string dir = test::temp_dir("hostile_cli_fifo");
  test::write_file(dir + "/config.json", tiny_config_json());
  make_fifo(dir + "/model.safetensors");
  const test::CliRun run = test::run_cli_split("info -m " + dir, kHangSeconds);
  ASSERT_FALSE(run.timed_out);
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(run, &why)) << why;
  EXPECT_EQ(run.err, "error: " + dir + "/model.safetensors: not a regular file\n");
}

// A draft head whose config.json is a FIFO: the head's own reader, end to end.
TEST(HostileFiles, CliRefusesAFifoHeadConfig) {
  EAGLE2_SHARED_FILE(model_config, "data/models/stories260K-hf/config.json");
  const std::string model = fs::path(model_config).parent_path().string();
  const std::string head = test::temp_dir("hostile_cli_head");
  test::write_file(head + "/model.safetensors", "");
  make_fifo(head + "/config.json");
  const test::CliRun run = test::run_cli_split(
      "generate -m " + model + " --draft " + head + " --ids 1,2 -n 2", kHangSeconds);
  ASSERT_FALSE(run.timed_out);
  std::string why;
  EXPECT_TRUE(test::is_one_clean_error(run, &why)) << why;
  EXPECT_EQ(run.err, "error: " + head + "/config.json: not a regular file\n");
}

}  // namespace
}  // namespace eagle2
