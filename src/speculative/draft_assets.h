// The weights a drafter loads from the folder its spec names (a draft model for "sps:DIR",
// Medusa or Hydra heads for "medusa:DIR" / "hydra:DIR"), loaded once per engine and shared by
// every sequence that drafts with them, as an EAGLE head is. Loading a 10 MB drafter for each
// request of a server, or for each bench column, would cost more than the drafting it serves.
//
// An engine's DraftAssets also knows the engine's target model: drafters that read the target
// (Medusa heads share its lm_head; a draft model must share its vocabulary) take it from here, so
// that make_drafter's callers need not thread the target through.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace eagle2 {

class LlamaModel;

// Thread-safe: get() locks (a first load happens under the lock, so two sequences asking for the
// same folder at once load it once). Loaded objects live as long as this owner or the last
// drafter holding them.
class DraftAssets {
 public:
  explicit DraftAssets(LlamaModel* target = nullptr) : target_(target) {}
  // The engine's target model; nullptr when the owner was made without one (then drafters that
  // need it fail with one clear error).
  LlamaModel* target() const { return target_; }

  // The object of `kind` loaded from `folder`, loading it with `load` on first use. Folders are
  // compared as written after lexical normalization ("a/./b/" is "a/b"); `kind` keeps a draft
  // model and heads in one folder apart. `load` returns non-null or throws.
  template <class T>
  std::shared_ptr<T> get(const std::string& kind, const std::string& folder,
                         const std::function<std::unique_ptr<T>()>& load) {
    const std::pair<std::string, std::string> key{kind, normalized(folder)};
    std::lock_guard lock(mutex_);
    std::shared_ptr<void>& slot = loaded_[key];
    if (!slot) slot = std::shared_ptr<T>(load());
    return std::static_pointer_cast<T>(slot);
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return loaded_.size();
  }

 private:
  static std::string normalized(const std::string& folder);

  LlamaModel* target_;
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<void>> loaded_;
};

}  // namespace eagle2
