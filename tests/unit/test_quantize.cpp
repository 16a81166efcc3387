// eagle2 quantize (quantize/quantize_model.h) and random GGUF models (quantize/random_gguf.h):
// the bundled model quantized from its Hugging Face folder and from llama.cpp's bf16 conversion is
// llama.cpp's own Q8_0 file tensor for tensor, byte for byte (the blocks of ggml's reference
// quantizer, Q/K rows interleaved as its converter does), with the converter's metadata; both
// outputs give the same logits; a GGUF source is re-typed (dequantize, then quantize); a random
// GGUF model is the random folder of the same seed quantized; bad input is one Error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/quant_blocks.h"
#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "model/llama_model.h"
#include "model/random_model.h"
#include "quantize/hf_to_gguf.h"
#include "quantize/llama_gguf_metadata.h"
#include "quantize/quantize_model.h"
#include "quantize/random_gguf.h"
#include "support/errors.h"
#include "support/random_models.h"
#include "support/shared_data.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer_load/load_tokenizer.h"

namespace eagle2 {
namespace {

namespace fs = std::filesystem;

const std::string kFolder = std::string(EAGLE2_SOURCE_DIR) + "/models/code-lm";

// The bundled model quantized once per test binary: {folder or bf16 file} x {Q8_0, Q4_0}.
std::string quantized(const std::string& in, DType type) {
  static std::map<std::pair<std::string, DType>, std::string> done;
  auto it = done.find({in, type});
  if (it != done.end()) return it->second;
  const std::string out = test::temp_dir("quantize-" + std::to_string(done.size())) + "/" +
                          fs::path(in).stem().string() + "-" + dtype_name(type) + ".gguf";
  const QuantizeResult r = quantize_model(in, out, type);
  EXPECT_EQ(r.tensors, 110);
  EXPECT_EQ(r.quantized, 85);  // every matrix; the 25 norm weights stay F32
  EXPECT_EQ(r.bytes, fs::file_size(out));
  return done[{in, type}] = out;
}

// Tensor name -> (ggml type, data bytes).
std::map<std::string, std::pair<uint32_t, std::string>> tensor_bytes(const GgufFile& g) {
  std::map<std::string, std::pair<uint32_t, std::string>> out;
  for (const GgufTensorInfo& t : g.tensors())
    out[std::string(t.name)] = {t.type, std::string(reinterpret_cast<const char*>(g.tensor_data(t)),
                                                    static_cast<size_t>(t.bytes))};
  return out;
}

// The tensors that differ (name, type or bytes) between two maps, as one line: a failure names
// them rather than printing megabytes of data.
std::string differing(const std::map<std::string, std::pair<uint32_t, std::string>>& a,
                      const std::map<std::string, std::pair<uint32_t, std::string>>& b) {
  std::string out;
  for (const auto& [name, v] : a) {
    auto it = b.find(name);
    if (it == b.end())
      out += name + " (only in the first) ";
    else if (it->second.first != v.first)
      out += name + " (type) ";
    else if (it->second.second != v.second)
      out += name + " (bytes) ";
  }
  for (const auto& [name, v] : b)
    if (!a.count(name)) out += name + " (only in the second) ";
  return out;
}

// A metadata value's encoding, to compare values of any type.
std::string encoded(const GgufValue& v) {
  GgufWriter w;
  w.add_value("k", v);
  const std::string path = test::temp_dir("quantize-encoded") + "/v.gguf";
  w.write(path, {});
  return test::read_file(path);
}

TEST(Quantize, BundledModelIsLlamaCppsQ8_0ByteForByte) {
  EAGLE2_SHARED_FILE(bf16, "data/gguf/code-lm-bf16.gguf");
  EAGLE2_SHARED_FILE(reference, "data/gguf/code-lm-q8_0.gguf");
  const GgufFile want(reference);
  const auto want_tensors = tensor_bytes(want);
  for (const std::string& in : {kFolder, bf16}) {
    const GgufFile got(quantized(in, DType::Q8_0));
    EXPECT_EQ(differing(tensor_bytes(got), want_tensors), "") << in;
    EXPECT_EQ(got.integer_or("general.file_type", -1), 7) << in;  // LLAMA_FTYPE_MOSTLY_Q8_0
  }
  // The folder's metadata is what llama.cpp's converter wrote for it (but the name, which it
  // derives from the folder's name, and its size label); the bf16 file's is copied as it is.
  const GgufFile source(bf16), from_folder(quantized(kFolder, DType::Q8_0)),
      from_file(quantized(bf16, DType::Q8_0));
  for (const GgufKv& kv : source.metadata()) {
    if (kv.key == "general.file_type") continue;
    ASSERT_NE(from_file.find(kv.key), nullptr) << kv.key;
    EXPECT_EQ(encoded(*from_file.find(kv.key)), encoded(kv.value)) << kv.key;
    if (kv.key == "general.name" || kv.key == "general.size_label") continue;
    ASSERT_NE(from_folder.find(kv.key), nullptr) << kv.key;
    EXPECT_EQ(encoded(*from_folder.find(kv.key)), encoded(kv.value)) << kv.key;
  }
  EXPECT_EQ(from_folder.metadata().size(), source.metadata().size() - 1);  // no size label
  EXPECT_EQ(from_folder.string("general.name"), "code-lm");
  EXPECT_EQ(from_file.metadata().size(), source.metadata().size());
}

// llama.cpp's Q4_0 file keeps the tied embedding in Q6_K (llama-quantize's choice for the output
// matrix); every other tensor is the same bytes.
TEST(Quantize, BundledModelQ4_0IsLlamaCppsButTheEmbedding) {
  EAGLE2_SHARED_FILE(reference, "data/gguf/code-lm-q4_0.gguf");
  auto want = tensor_bytes(GgufFile(reference));
  auto got = tensor_bytes(GgufFile(quantized(kFolder, DType::Q4_0)));
  EXPECT_EQ(want["token_embd.weight"].first, 14u);  // Q6_K
  EXPECT_EQ(got["token_embd.weight"].first, 2u);    // Q4_0
  want.erase("token_embd.weight");
  got.erase("token_embd.weight");
  EXPECT_EQ(differing(got, want), "");
}

// The same prompt through each model: every logit, bit for bit.
void expect_same_logits(const std::string& a_path, const std::string& b_path) {
  auto a = LlamaModel::load(a_path), b = LlamaModel::load(b_path);
  ThreadPool pool(2);
  std::vector<int32_t> ids, rows;
  for (int i = 0; i < 24; ++i) {
    ids.push_back((i * 37 + 5) % 4096);
    rows.push_back(i);
  }
  ForwardResult ra, rb;
  KvCache ka = a->make_cache(32), kb = b->make_cache(32);
  a->forward(Batch::causal(ids, 0), ka, rows, ra, pool);
  b->forward(Batch::causal(ids, 0), kb, rows, rb, pool);
  ASSERT_EQ(ra.logits.size(), rb.logits.size());
  EXPECT_EQ(std::memcmp(ra.logits.data(), rb.logits.data(), ra.logits.size() * sizeof(float)), 0)
      << a_path << " vs " << b_path;
}

TEST(Quantize, BothSourcesAndLlamaCppsFileGiveTheSameLogits) {
  EAGLE2_SHARED_FILE(bf16, "data/gguf/code-lm-bf16.gguf");
  EAGLE2_SHARED_FILE(reference, "data/gguf/code-lm-q8_0.gguf");
  const std::string from_folder = quantized(kFolder, DType::Q8_0);
  expect_same_logits(from_folder, quantized(bf16, DType::Q8_0));
  expect_same_logits(from_folder, reference);
  expect_same_logits(quantized(kFolder, DType::Q4_0), quantized(bf16, DType::Q4_0));
}

// The vocabulary written from the folder's tokenizer.model encodes as the folder does.
TEST(Quantize, FolderVocabularyEncodesAsTheFolder) {
  const auto folder = load_tokenizer(kFolder);
  // (A trailing slash names the same folder.)
  const auto file = load_tokenizer(quantized(kFolder + "/", DType::Q8_0));
  EXPECT_EQ(GgufFile(quantized(kFolder + "/", DType::Q8_0)).string("general.name"), "code-lm");
  EXPECT_EQ(file->vocab_size(), folder->vocab_size());
  EXPECT_EQ(file->bos_id(), folder->bos_id());
  EXPECT_EQ(file->eos_id(), folder->eos_id());
  for (const std::string text :
       {"def fibonacci(n):\n    return n", "  two  spaces, tabs\t and ünïcödé 𝟘", "x"})
    EXPECT_EQ(file->encode(text, true), folder->encode(text, true)) << text;
}

// A GGUF source: a tensor already of the type is copied as it is; one of another block type is
// dequantized and quantized again; norms are copied; general.file_type follows the type.
TEST(Quantize, GgufSourceIsRetyped) {
  const std::string q8 = quantized(kFolder, DType::Q8_0);
  const std::string dir = test::temp_dir("quantize-retype");
  quantize_model(q8, dir + "/again.gguf", DType::Q8_0);
  EXPECT_EQ(differing(tensor_bytes(GgufFile(dir + "/again.gguf")), tensor_bytes(GgufFile(q8))), "");
  quantize_model(q8, dir + "/q4.gguf", DType::Q4_0);
  const GgufFile src(q8), q4(dir + "/q4.gguf");
  EXPECT_EQ(q4.integer_or("general.file_type", -1), 2);  // LLAMA_FTYPE_MOSTLY_Q4_0
  ASSERT_EQ(q4.tensors().size(), src.tensors().size());
  for (size_t i = 0; i < src.tensors().size(); ++i) {
    const GgufTensorInfo &s = src.tensors()[i], &t = q4.tensors()[i];
    ASSERT_EQ(t.name, s.name);
    if (s.dims.size() == 1) {
      EXPECT_EQ(t.type, 0u);
      EXPECT_EQ(std::memcmp(q4.tensor_data(t), src.tensor_data(s), s.bytes), 0) << s.name;
      continue;
    }
    EXPECT_EQ(t.type, 2u) << s.name;
    const int64_t n = s.dims[0] * s.dims[1];
    std::vector<float> values(static_cast<size_t>(n));
    dequantize_blocks(DType::Q8_0, src.tensor_data(s), values.data(), n);
    std::vector<unsigned char> want(dtype_bytes(DType::Q4_0, n));
    quantize_blocks(DType::Q4_0, values.data(), want.data(), n);
    ASSERT_EQ(t.bytes, want.size());
    EXPECT_EQ(std::memcmp(q4.tensor_data(t), want.data(), want.size()), 0) << s.name;
  }
}

LlamaConfig random_config(int64_t vocab) {
  LlamaConfig c = test::tiny_config();
  c.vocab_size = vocab;
  return c;
}

// make-random --dtype q8_0|q4_0 writes the model quantize writes from the random folder of the
// same seed (with the same tokenizer.model), and generate can run it.
TEST(Quantize, RandomGgufIsTheRandomFolderQuantized) {
  const std::string tokenizer = kFolder + "/tokenizer.model";
  for (const auto& [vocab, type] :
       {std::pair{int64_t{512}, DType::Q4_0}, {int64_t{5000}, DType::Q8_0}}) {
    const LlamaConfig cfg = random_config(vocab);
    const std::string dir = test::temp_dir("quantize-random-" + std::to_string(vocab));
    write_random_model(dir + "/folder", cfg, DType::F32, 11);
    fs::copy_file(tokenizer, dir + "/folder/tokenizer.model");
    quantize_model(dir + "/folder", dir + "/quantized.gguf", type);
    write_random_gguf(dir + "/random.gguf", cfg, type, 11, tokenizer);
    const GgufFile a(dir + "/quantized.gguf"), b(dir + "/random.gguf");
    EXPECT_EQ(differing(tensor_bytes(a), tensor_bytes(b)), "") << vocab;
    // The vocabulary is cut (512) or padded (5000) to the config's size, as llama.cpp's converter
    // does.
    const GgufValue* tokens = b.array("tokenizer.ggml.tokens", GgufType::kString, true);
    ASSERT_EQ(tokens->count, static_cast<uint64_t>(vocab));
    if (vocab > 4096) {
      EXPECT_EQ(tokens->strings[4096], "[PAD1]");
      EXPECT_EQ(gguf_i32_at(*b.array("tokenizer.ggml.token_type", GgufType::kInt32, true), 4999),
                5);
    }
    auto m = LlamaModel::load(dir + "/random.gguf");
    EXPECT_EQ(m->config().vocab_size, vocab);
    EXPECT_EQ(load_tokenizer(dir + "/random.gguf")->vocab_size(), vocab);
  }
}

TEST(Quantize, BadInputIsOneError) {
  const std::string dir = test::temp_dir("quantize-bad");
  const std::string out = dir + "/out.gguf";
  EXPECT_EQ(test::error_of([&] { quantize_model(dir + "/none", out, DType::Q8_0); }),
            dir + "/none: not found (give a Hugging Face model folder or a .gguf file)");
  EXPECT_EQ(
      test::error_of([&] { quantize_model(dir, out, DType::Q8_0); }),
      dir + ": not a model: no config.json (give a Hugging Face model folder or a .gguf file)");
  test::write_file(dir + "/notes.txt", "hello");
  EXPECT_EQ(test::error_of([&] { quantize_model(dir + "/notes.txt", out, DType::Q8_0); }),
            dir + "/notes.txt: GGUF: not a GGUF file (no GGUF magic)");
  EXPECT_EQ(test::error_of([&] { quantize_model(kFolder, dir + "/none/out.gguf", DType::Q8_0); }),
            dir + "/none/out.gguf: cannot write: the folder " + dir + "/none does not exist");
  EXPECT_EQ(test::error_of([&] { quantize_model(kFolder, dir + "/out.bin", DType::Q8_0); }),
            dir + "/out.bin: the output is a GGUF file: give a name ending in .gguf");
  EXPECT_EQ(test::error_of([&] { quantize_model(kFolder, dir, DType::Q8_0); }),
            dir + ": the output is a GGUF file: give a name ending in .gguf");
  EXPECT_EQ(test::error_of([&] { quantize_model(kFolder, out, DType::BF16); }),
            "quantize: BF16 is not a quantization type (Q8_0, Q4_0 are)");
  // A folder without a tokenizer: the file could not be loaded by llama.cpp.
  const LlamaConfig cfg = random_config(512);
  write_random_model(dir + "/no-tokenizer", cfg, DType::F32, 1);
  EXPECT_EQ(test::error_of([&] { quantize_model(dir + "/no-tokenizer", out, DType::Q8_0); }),
            dir +
                "/no-tokenizer: no tokenizer.model or tokenizer.json: a GGUF file carries the "
                "model's vocabulary, and llama.cpp cannot load one without it");
  // What llama.cpp cannot say: LLaMA-3.1 rope scaling outside its llama architecture.
  LlamaConfig scaled = cfg;
  scaled.architecture = "Qwen2ForCausalLM";
  scaled.rope_scaling = RopeScaling::Llama3;
  scaled.rope_factor = 8.0f;
  write_random_model(dir + "/scaled", scaled, DType::F32, 1);
  fs::copy_file(kFolder + "/tokenizer.model", dir + "/scaled/tokenizer.model");
  EXPECT_EQ(test::error_of([&] { quantize_model(dir + "/scaled", out, DType::Q8_0); }),
            dir +
                "/scaled/config.json: rope_scaling llama3 is written to GGUF for LLaMA models "
                "only (llama.cpp's qwen2 reads no rope_freqs)");
  // A vocabulary that cannot be cut to the config's size without losing byte pieces.
  EXPECT_EQ(test::error_of([&] {
              write_random_gguf(out, random_config(100), DType::Q8_0, 1,
                                kFolder + "/tokenizer.model");
            }),
            kFolder +
                "/tokenizer.model: the tokenizer's 4096 pieces cannot be cut to vocab_size "
                "100: piece 100 (<0x61>) is a special or byte piece the vocabulary needs");
  // A GGUF file with a llama config but no vocabulary.
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.embedding_length", 64);
  w.add_u32("llama.feed_forward_length", 128);
  w.add_u32("llama.block_count", 1);
  w.add_u32("llama.attention.head_count", 4);
  w.add_u32("llama.context_length", 64);
  w.add_u32("llama.vocab_size", 300);
  w.write(dir + "/no-vocab.gguf", {});
  EXPECT_EQ(test::error_of([&] { quantize_model(dir + "/no-vocab.gguf", out, DType::Q8_0); }),
            dir + "/no-vocab.gguf: GGUF: no tokenizer.ggml.model");
  EXPECT_FALSE(fs::exists(out));
}

// ggml's rounding of a NaN or an infinity is undefined: refused, naming the tensor and the row.
TEST(Quantize, NonFiniteWeightsAreRefused) {
  GgufWriter w;
  std::vector<HfTensor> tensors = {
      {"model.layers.0.mlp.up_proj.weight", {4, 32}, [](int64_t first, int64_t count, float* out) {
         for (int64_t i = 0; i < count * 32; ++i)
           out[i] = first + i / 32 == 2 && i % 32 == 5 ? NAN : 0.5f;
       }}};
  HfTensorCounts counts;
  const GgufWriter::Fill fill = add_hf_tensors(w, tensors, 4, true, DType::Q8_0, &counts);
  EXPECT_EQ(counts.quantized, 1);
  const std::string path = test::temp_dir("quantize-nan") + "/m.gguf";
  EXPECT_EQ(test::error_of([&] { w.write(path, fill); }),
            "tensor 'model.layers.0.mlp.up_proj.weight' holds a non-finite value (nan) in row 2: "
            "it cannot be quantized to Q8_0");
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace eagle2
