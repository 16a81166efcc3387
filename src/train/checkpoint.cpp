#include "train/checkpoint.h"

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "io/safetensors.h"

namespace eagle2::train {

namespace {

constexpr const char* kFormat = "eagle2-train-checkpoint";

std::string m_name(const std::string& p) {
  return "adamw.m." + p;
}
std::string v_name(const std::string& p) {
  return "adamw.v." + p;
}

const std::string& require(const std::map<std::string, std::string>& meta, const std::string& path,
                           const std::string& key) {
  auto it = meta.find(key);
  if (it == meta.end()) fail(path, ": checkpoint metadata lacks \"", key, "\"");
  return it->second;
}

uint64_t parse_u64(const std::string& s, const std::string& path, const std::string& key) {
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
    fail(path, ": checkpoint metadata \"", key, "\" is not an unsigned integer: '", s, "'");
  uint64_t v = 0;
  for (char c : s) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10)
      fail(path, ": checkpoint metadata \"", key, "\" overflows: '", s, "'");
    v = v * 10 + d;
  }
  return v;
}

int64_t parse_i64(const std::string& s, const std::string& path, const std::string& key) {
  const uint64_t v = parse_u64(s, path, key);
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(path, ": checkpoint metadata \"", key, "\" is out of range: '", s, "'");
  return static_cast<int64_t>(v);
}

void copy_tensor(const SafetensorsFile& f, const std::string& name,
                 const std::vector<int64_t>& shape, std::vector<float>& dst) {
  auto it = f.tensors().find(name);
  if (it == f.tensors().end()) fail(f.path(), ": tensor '", name, "' not found");
  const TensorView& t = it->second;
  if (t.shape != shape)
    fail(f.path(), ": tensor '", name, "' has shape ", shape_string(t.shape), ", expected ",
         shape_string(shape));
  if (t.dtype != DType::F32)
    fail(f.path(), ": tensor '", name, "' has dtype ", dtype_name(t.dtype), ", expected F32");
  if (t.nbytes() != dst.size() * sizeof(float))
    fail(f.path(), ": tensor '", name, "' has the wrong size");
  if (!dst.empty()) std::memcpy(dst.data(), t.data, t.nbytes());
}

}  // namespace

void save_checkpoint(const std::string& path, const AdamW& opt, const TrainState& state) {
  std::vector<TensorToWrite> tensors;
  const ParamList params = opt.params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = *params[i];
    tensors.push_back({p.name, DType::F32, p.shape, p.value.data()});
    tensors.push_back({m_name(p.name), DType::F32, p.shape, opt.m(i).data()});
    tensors.push_back({v_name(p.name), DType::F32, p.shape, opt.v(i).data()});
  }
  std::map<std::string, std::string> meta;
  for (const auto& [k, v] : state.extra) meta["extra." + k] = v;
  meta["format"] = kFormat;
  // A std::string, not the literal: GCC 12 warns falsely on assigning a one-character literal
  // here (-Wrestrict, GCC bug 105329).
  meta["version"] = std::string("1");
  meta["step"] = std::to_string(state.step);
  meta["adamw_step"] = std::to_string(opt.step_count());
  meta["rng_state"] = std::to_string(state.rng_state);
  const AdamWConfig& c = opt.config();
  meta["adamw_beta1"] = std::to_string(c.beta1);
  meta["adamw_beta2"] = std::to_string(c.beta2);
  meta["adamw_eps"] = std::to_string(c.eps);
  meta["adamw_weight_decay"] = std::to_string(c.weight_decay);
  write_safetensors(path, tensors, meta);
}

TrainState load_checkpoint(const std::string& path, AdamW& opt) {
  const SafetensorsFile f(path);
  const auto& meta = f.metadata();
  if (require(meta, path, "format") != kFormat)
    fail(path, ": not a training checkpoint (format '", meta.at("format"), "')");
  if (require(meta, path, "version") != "1")
    fail(path, ": unsupported checkpoint version '", meta.at("version"), "'");

  std::set<std::string> expected;
  const ParamList params = opt.params();
  for (size_t i = 0; i < params.size(); ++i) {
    Parameter& p = *params[i];
    for (const std::string& n : {p.name, m_name(p.name), v_name(p.name)}) expected.insert(n);
  }
  for (const auto& [name, t] : f.tensors())
    if (!expected.count(name))
      fail(path, ": unexpected tensor '", name, "' (not a parameter of this model)");
  for (size_t i = 0; i < params.size(); ++i) {
    Parameter& p = *params[i];
    copy_tensor(f, p.name, p.shape, p.value);
    copy_tensor(f, m_name(p.name), p.shape, opt.m(i));
    copy_tensor(f, v_name(p.name), p.shape, opt.v(i));
  }

  TrainState s;
  s.step = parse_i64(require(meta, path, "step"), path, "step");
  s.rng_state = parse_u64(require(meta, path, "rng_state"), path, "rng_state");
  opt.set_step_count(parse_i64(require(meta, path, "adamw_step"), path, "adamw_step"));
  for (const auto& [k, v] : meta)
    if (k.rfind("extra.", 0) == 0) s.extra[k.substr(6)] = v;
  return s;
}

}  // namespace eagle2::train
