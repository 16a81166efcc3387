// The bundled model and head (models/, see models/README.md): where demo and serve find them
// when no -m/--draft is given.
#pragma once

#include <string>

namespace eagle2::cli {

// models/<name> below the working directory, else next to the repository the executable was
// built in (build/bin/eagle2 -> ../../models). Error when neither has it.
std::string bundled_path(const std::string& name);

// The model and head folders a serving command runs: -m's folder or the bundled model; --draft's
// folder, none for "none", else the bundled head with the bundled model and none with -m (the
// bundled head drafts for the bundled model only).
struct ModelAndHead {
  std::string model_dir, head_dir;  // head_dir empty: no head
};
ModelAndHead model_and_head(const std::string& model_flag, const std::string& draft_flag);

}  // namespace eagle2::cli
