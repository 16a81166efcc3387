#include "speculative/draft_assets.h"

#include <filesystem>

namespace eagle2 {

std::string DraftAssets::normalized(const std::string& folder) {
  std::string s = std::filesystem::path(folder).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace eagle2
