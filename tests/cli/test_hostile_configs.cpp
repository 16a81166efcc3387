// The hostile-config contract (issue #9): whatever integer a model's or an EAGLE head's
// config.json holds, `eagle2 generate` either completes normally or ends with exit 1 and one
// "error: " line; never a crash, a hang or a sanitizer report.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "draft/eagle_head.h"
#include "model/llama_config.h"
#include "model/random_model.h"
#include "support/cli.h"
#include "support/decoding.h"
#include "support/random_models.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A hang detector, not a speed claim: a tiny model answers in well under a second.
constexpr int kTimeoutSeconds = 60;

// The values every integer field is set to, one field at a time: zero, negative, just past int32,
// past uint32, and values whose products wrap around int64.
const std::vector<int64_t> kHostileValues = {0,
                                             -1,
                                             int64_t{1} << 31,
                                             (int64_t{1} << 32) + 1,
                                             (int64_t{1} << 62) + 8,
                                             std::numeric_limits<int64_t>::max()};

// The tiny test model with every optional integer field present, so that each can be mutated:
// llama3 rope scaling (original_max_position_embeddings) and a sliding window.
LlamaConfig base_config() {
  LlamaConfig c = test::tiny_config();
  c.rope_scaling = RopeScaling::Llama3;
  c.rope_factor = 8.0f;
  c.rope_low_freq_factor = 1.0f;
  c.rope_high_freq_factor = 4.0f;
  c.rope_original_max_position = 128;
  c.sliding_window = 512;
  return c;
}

// JSON pointers of every integer in `j`, nested objects and lists included.
void integer_fields(const json& j, const json::json_pointer& at,
                    std::vector<json::json_pointer>& out) {
  if (j.is_number_integer()) {
    out.push_back(at);
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) integer_fields(value, at / key, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) integer_fields(j[i], at / i, out);
  }
}

// A folder of a model or head: its pristine config, and a scratch copy whose config.json each
// case rewrites (the weights are copied once; they are never changed).
struct Folder {
  std::string dir;      // the original
  std::string scratch;  // same weights, config.json rewritten per case
  json config;

  void make_scratch(const std::string& name) {
    scratch = test::temp_dir(name);
    fs::copy_file(dir + "/model.safetensors", scratch + "/model.safetensors");
    config = json::parse(test::read_file(dir + "/config.json"));
  }
  void write_scratch_config(const json& j) const {
    test::write_file(scratch + "/config.json", j.dump(2));
  }
};

class HostileConfigs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new Folder();
    head_ = new Folder();
    model_->dir = test::temp_dir("hostile-model");
    write_random_model(model_->dir, base_config(), DType::F32, 3);
    model_->make_scratch("hostile-model-scratch");
    const auto target = LlamaModel::load(model_->dir);
    head_->dir = test::write_random_head("hostile", *target);
    head_->make_scratch("hostile-head-scratch");
  }
  static void TearDownTestSuite() {
    delete model_;
    delete head_;
  }

  static test::CliRun generate(const std::string& model_dir, const std::string& head_dir = "") {
    std::string args = "generate -m " + model_dir + " --ids 1,2,3 -n 4 -t 1";
    if (!head_dir.empty()) args += " --draft " + head_dir + " --total-tokens 8 --depth 2";
    return test::run_cli_split(args, kTimeoutSeconds);
  }

  // Checks the contract for one run; returns true when it was a (clean) error.
  static bool expect_contract(const test::CliRun& run, const std::string& what) {
    EXPECT_FALSE(run.timed_out) << what << ": hang";
    for (const char* report : {"runtime error", "AddressSanitizer", "LeakSanitizer"})
      EXPECT_EQ(run.err.find(report), std::string::npos) << what << ": sanitizer report\n"
                                                         << run.err;
    if (run.code == 0) return false;
    std::string why;
    EXPECT_TRUE(test::is_one_clean_error(run, &why)) << what << ": " << why;
    return true;
  }

  static Folder* model_;
  static Folder* head_;
};

Folder* HostileConfigs::model_ = nullptr;
Folder* HostileConfigs::head_ = nullptr;

TEST_F(HostileConfigs, EveryIntegerFieldAtEveryHostileValue) {
  // The unmodified folders run: otherwise every case below could "pass" by failing for the same
  // unrelated reason.
  const test::CliRun plain = generate(model_->dir, head_->dir);
  ASSERT_EQ(plain.code, 0) << plain.err;

  int errors = 0, completions = 0;
  for (Folder* folder : {model_, head_}) {
    const bool is_head = folder == head_;
    std::vector<json::json_pointer> fields;
    integer_fields(folder->config, json::json_pointer(), fields);
    // Every size, position and token-id field the config writer emits, nested ones included.
    EXPECT_EQ(fields.size(), 12u) << folder->config.dump();
    EXPECT_TRUE(folder->config.contains(
        json::json_pointer("/rope_scaling/original_max_position_embeddings")));
    for (const json::json_pointer& field : fields) {
      for (const int64_t value : kHostileValues) {
        json j = folder->config;
        j[field] = value;
        folder->write_scratch_config(j);
        const test::CliRun run =
            is_head ? generate(model_->dir, head_->scratch) : generate(model_->scratch);
        const std::string what = std::string(is_head ? "head" : "model") + " " + field.to_string() +
                                 " = " + std::to_string(value);
        if (expect_contract(run, what))
          ++errors;
        else
          ++completions;
      }
    }
  }
  // Both outcomes occur (e.g. bos_token_id 0 runs; hidden_size 0 is refused).
  EXPECT_GT(errors, 0);
  EXPECT_GT(completions, 0);
}

// The cases, each with the message it must give.
TEST_F(HostileConfigs, NamedCasesGiveTheirMessages) {
  struct Case {
    const char* name;
    std::vector<std::pair<const char*, int64_t>> fields;
    std::string message;  // after "error: <scratch>/"
  };
  const std::vector<Case> cases = {
      {"the issue's reproducer: head products that wrap to real widths",
       {{"num_attention_heads", (int64_t{1} << 62) + 8},
        {"num_key_value_heads", (int64_t{1} << 61) + 4},
        {"head_dim", 8}},
       "config.json: \"num_attention_heads\" is 4611686018427387912, more than the supported "
       "maximum 65536"},
      {"five million layers",
       {{"num_hidden_layers", 5000000}},
       "config.json: \"num_hidden_layers\" is 5000000, more than the supported maximum 65536"},
      {"2^62 layers",
       {{"num_hidden_layers", int64_t{1} << 62}},
       "config.json: \"num_hidden_layers\" is 4611686018427387904, more than the supported "
       "maximum 65536"},
      {"more layers than the checkpoint, within the limit",
       {{"num_hidden_layers", 65536}},
       ": tensor 'model.layers.65535.input_layernorm.weight' not found (config.json has "
       "num_hidden_layers 65536)"},
      {"fewer layers than the checkpoint",
       {{"num_hidden_layers", 1}},
       "model.safetensors: tensor 'model.layers.1.input_layernorm.weight' is past the last layer: "
       "config.json has num_hidden_layers 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json j = model_->config;
    for (const auto& [key, value] : c.fields) j[key] = value;
    model_->write_scratch_config(j);
    const test::CliRun run = generate(model_->scratch);
    expect_contract(run, c.name);
    // The store names the folder itself for a missing tensor, the file for the others.
    const std::string prefix = c.message[0] == ':' ? model_->scratch : model_->scratch + "/";
    EXPECT_EQ(run.err, "error: " + prefix + c.message + "\n");
  }
}

// Byte mutations of the files a model folder and a head folder hold (config.json and the
// safetensors header region), loaded and run in process: each mutant loads and decodes, or throws
// eagle2::Error. Anything else (another exception, a crash, a sanitizer report) fails the test
// binary. Bounded: a fixed count of seeded mutants.
TEST_F(HostileConfigs, ByteMutationsLoadOrFailCleanly) {
  const int mutants = test::scaled(200);
  std::mt19937_64 rng(99);
  ThreadPool pool(1);
  const std::vector<int32_t> prompt = {1, 2, 3};
  GenerationOptions opt;
  opt.max_new_tokens = 3;
  int loaded = 0, refused = 0;
  for (const Folder* folder : {model_, head_}) {
    const std::string config = test::read_file(folder->dir + "/config.json");
    const std::string weights = test::read_file(folder->dir + "/model.safetensors");
    // The header: the 8-byte length and the JSON after it (mutating tensor data only changes
    // values, which the non-finite checks cover separately).
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i)
      header_len = (header_len << 8) | static_cast<unsigned char>(weights[i]);
    const size_t header_end = std::min<size_t>(weights.size(), 8 + header_len);
    for (int m = 0; m < mutants; ++m) {
      std::string c = config, w = weights;
      std::string& target = m % 2 == 0 ? c : w;
      const size_t span = m % 2 == 0 ? c.size() : header_end;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e)
        target[rng() % span] =
            static_cast<char>(rng() % 2 ? rng() % 256 : "0123456789-.e[]{}\",:"[rng() % 19]);
      test::write_file(folder->scratch + "/config.json", c);
      test::write_file(folder->scratch + "/model.safetensors", w);
      try {
        if (folder == model_) {
          auto model = LlamaModel::load(model_->scratch);
          test::plain_tokens(*model, prompt, opt, 16, pool);
        } else {
          auto target_model = LlamaModel::load(model_->dir);
          auto head = EagleHead::load(head_->scratch, *target_model);
        }
        ++loaded;
      } catch (const Error&) {
        ++refused;
      }
    }
    // Restore the scratch folder for the other tests.
    test::write_file(folder->scratch + "/config.json", config);
    test::write_file(folder->scratch + "/model.safetensors", weights);
  }
  EXPECT_GT(refused, 0);  // the mutations did reach the parsers
  EXPECT_EQ(loaded + refused, 2 * mutants);
}

}  // namespace
}  // namespace eagle2
