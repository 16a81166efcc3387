#include "bundled.h"

#include <filesystem>

#include "eagle2/error.h"

namespace eagle2::cli {

namespace fs = std::filesystem;

std::string bundled_path(const std::string& name) {
  const fs::path here = fs::path("models") / name;
  if (fs::exists(here)) return here.string();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path().parent_path().parent_path() / "models" / name;
    if (fs::exists(beside)) return beside.string();
  }
  fail("the bundled ", name,
       " is not in ./models or next to this executable's build folder: run "
       "from the repository root, or pass -m MODEL and --draft HEAD");
}

ModelAndHead model_and_head(const std::string& model_flag, const std::string& draft_flag) {
  const bool bundled = model_flag.empty();
  ModelAndHead r;
  r.model_dir = bundled ? bundled_path("code-lm") : model_flag;
  if (draft_flag != "none")
    r.head_dir = !draft_flag.empty() ? draft_flag : bundled ? bundled_path("code-lm-eagle") : "";
  return r;
}

}  // namespace eagle2::cli
