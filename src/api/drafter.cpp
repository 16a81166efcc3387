// eagle2/drafter.h over speculative/drafter_spec.h and draft/tree_choices.h.
#include "eagle2/drafter.h"

#include "api/convert.h"
#include "api/handles.h"
#include "core/regular_file.h"
#include "draft/tree_choices.h"

namespace eagle2::api {

TreeChoices parse_tree_choices(const std::string& json_text, const std::string& where) {
  return eagle2::parse_tree_choices(json_text, where);
}

TreeChoices load_tree_choices(const std::string& path, const std::string& where) {
  const std::string text = read_regular_file(path, read_limit::kJson, "tree choices");
  return eagle2::parse_tree_choices(text, where);
}

std::string DrafterSpec::to_string() const {
  return to_internal(*this).to_string();
}
bool DrafterSpec::operator==(const DrafterSpec& other) const {
  return to_internal(*this) == to_internal(other);
}
bool DrafterSpec::needs_head() const {
  return to_internal(*this).needs_head();
}

DrafterSpec parse_drafter_spec(const std::string& text) {
  return to_public(eagle2::parse_drafter_spec(text));
}

Drafter::Drafter() = default;
Drafter::Drafter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Drafter::~Drafter() = default;
Drafter::Drafter(Drafter&&) noexcept = default;
Drafter& Drafter::operator=(Drafter&&) noexcept = default;

namespace {

Drafter make_for(const DrafterSpec& spec, LlamaModel* target, Head* head, Threads& threads,
                 int64_t ctx, float temperature, const VerifyCost* cost) {
  auto impl = std::make_unique<Drafter::Impl>();
  impl->policies = std::make_unique<DraftPolicies>(cost ? cost->impl().model : nullptr, target);
  impl->drafter = make_drafter(to_internal(spec), head ? head->impl().head.get() : nullptr,
                               threads.impl().pool, ctx, *impl->policies, temperature);
  return Drafter(std::move(impl));
}

}  // namespace

Drafter Drafter::make(const DrafterSpec& spec, Head* head, Threads& threads, int64_t ctx,
                      float temperature, const VerifyCost* cost) {
  return make_for(spec, nullptr, head, threads, ctx, temperature, cost);
}

Drafter Drafter::make(const DrafterSpec& spec, Model& target, Head* head, Threads& threads,
                      int64_t ctx, float temperature, const VerifyCost* cost) {
  return make_for(spec, target.impl().model.get(), head, threads, ctx, temperature, cost);
}

Drafter::operator bool() const {
  return impl_ && impl_->drafter;
}

std::string Drafter::name() const {
  return *this ? impl_->drafter->name() : "plain";
}

}  // namespace eagle2::api
