// The bundled model and head (models/, see models/README.md): where demo and serve find them
// when no -m/--draft is given.
#pragma once

#include <string>

namespace eagle2::cli {

// models/<name> below the working directory, else next to the repository the executable was
// built in (build/bin/eagle2 -> ../../models). Error when neither has it.
std::string bundled_path(const std::string& name);

}  // namespace eagle2::cli
