// eagle2/head.h over draft/eagle_head.h and draft/draft_vocab.h.
#include "eagle2/head.h"

#include "api/handles.h"
#include "draft/draft_vocab.h"

namespace eagle2::api {

Head Head::load(const std::string& dir, const Model& target) {
  auto impl = std::make_unique<Impl>();
  impl->head = EagleHead::load(dir, *target.impl().model);
  return Head(std::move(impl));
}

Head::Head(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Head::~Head() = default;
Head::Head(Head&&) noexcept = default;
Head& Head::operator=(Head&&) noexcept = default;

int64_t Head::parameter_count() const { return impl_->head->parameter_count(); }

void Head::restrict_vocab(const std::string& draft_vocab_tsv, int64_t n) {
  EagleHead& head = *impl_->head;
  head.restrict_vocab(draft_vocab_subset(draft_vocab_tsv, head.config().vocab_size, n));
}

int64_t Head::draft_vocab_size() const { return impl_->head->draft_vocab_size(); }

std::vector<int32_t> ids_by_frequency(const std::vector<int64_t>& counts) {
  return eagle2::ids_by_frequency(counts);
}

void write_draft_vocab(const std::string& path, const std::vector<int64_t>& counts) {
  eagle2::write_draft_vocab(path, counts);
}

}  // namespace eagle2::api
