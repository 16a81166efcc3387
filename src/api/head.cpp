// eagle2/head.h over draft/eagle_head.h and draft/draft_vocab.h.
#include "eagle2/head.h"

#include <filesystem>

#include "api/handles.h"
#include "core/error.h"
#include "draft/draft_vocab.h"

namespace eagle2::api {

Head Head::load(const std::string& dir, const Model& target, const std::string& weights) {
  std::optional<eagle2::DType> type;
  if (weights == "auto")
    type = EagleHead::weights_type_for(*target.impl().model);
  else if (weights == "q8_0")
    type = eagle2::DType::Q8_0;
  else if (weights == "q4_0")
    type = eagle2::DType::Q4_0;
  else if (weights != "as-is")
    fail("draft head weights: '", weights, "' is not one of auto, as-is, q8_0, q4_0");
  auto impl = std::make_unique<Impl>();
  impl->head = EagleHead::load(dir, *target.impl().model);
  if (type) impl->head->quantize_weights(*type);
  return Head(std::move(impl));
}

std::string Head::weights_dtype() const {
  return impl_->head->weights_dtype();
}

Head::Head(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Head::~Head() = default;
Head::Head(Head&&) noexcept = default;
Head& Head::operator=(Head&&) noexcept = default;

int64_t Head::parameter_count() const {
  return impl_->head->parameter_count();
}

int64_t Head::kv_bytes_per_token() const {
  const auto& c = impl_->head->config();
  return 2 * static_cast<int64_t>(sizeof(float)) * c.num_kv_heads * c.head_dim;
}

void Head::restrict_vocab(const std::string& draft_vocab_tsv, int64_t n) {
  EagleHead& head = *impl_->head;
  head.require_restrictable();  // before the file: an EAGLE-3 folder has none, and that is not why
  head.restrict_vocab(draft_vocab_subset(draft_vocab_tsv, head.config().vocab_size, n));
}

int64_t Head::default_draft_vocab(const std::string& dir, int64_t asked) const {
  if (asked >= 0) return asked;
  std::error_code ec;
  const bool has_file = std::filesystem::exists(dir + "/draft_vocab.tsv", ec);
  return kind() == "eagle" && has_file ? 1024 : 0;
}

std::string Head::kind() const {
  return impl_->head->kind() == EagleHead::Kind::Eagle3 ? "eagle3" : "eagle";
}

int64_t Head::draft_vocab_size() const {
  return impl_->head->draft_vocab_size();
}

std::vector<int32_t> ids_by_frequency(const std::vector<int64_t>& counts) {
  return eagle2::ids_by_frequency(counts);
}

void write_draft_vocab(const std::string& path, const std::vector<int64_t>& counts) {
  eagle2::write_draft_vocab(path, counts);
}

}  // namespace eagle2::api
