#include "draft/tree_choices.h"

#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace eagle2 {

const TreeChoices& mc_sim_7b_63() {
  static const TreeChoices choices = {{0},
                                      {1},
                                      {2},
                                      {3},
                                      {0, 0},
                                      {0, 1},
                                      {0, 2},
                                      {1, 0},
                                      {1, 1},
                                      {2, 0},
                                      {2, 1},
                                      {3, 0},
                                      {0, 0, 0},
                                      {0, 0, 1},
                                      {0, 0, 2},
                                      {0, 1, 0},
                                      {0, 1, 1},
                                      {0, 2, 0},
                                      {0, 2, 1},
                                      {1, 0, 0},
                                      {0, 0, 0, 0},
                                      {0, 0, 0, 1},
                                      {0, 0, 0, 2},
                                      {0, 0, 0, 0, 0},
                                      {0, 0, 0, 0, 1}};
  return choices;
}

TreeChoices chain_choices(int depth) {
  TreeChoices c;
  std::vector<int> path;
  for (int d = 0; d <= depth; ++d) {
    path.push_back(0);
    c.push_back(path);
  }
  return c;
}

TreeChoices parse_tree_choices(const std::string& json_text, const std::string& where) {
  TreeChoices choices;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception&) {
    fail(where, ": tree choices are not valid JSON (expected e.g. [[0], [1], [0, 0]])");
  }
  if (!j.is_array() || j.empty())
    fail(where, ": tree choices must be a non-empty JSON list of paths, e.g. [[0], [1], [0, 0]]");
  for (const auto& path : j) {
    if (!path.is_array() || path.empty())
      fail(where, ": each tree path must be a non-empty list of sibling ranks");
    std::vector<int> p;
    for (const auto& r : path) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > 1000)
        fail(where, ": sibling ranks must be integers in [0, 1000]");
      p.push_back(r.get<int>());
    }
    choices.push_back(std::move(p));
  }
  std::map<std::vector<int>, bool> seen;
  for (const auto& p : choices) {
    if (seen.count(p)) fail(where, ": tree path ", nlohmann::json(p).dump(), " is listed twice");
    seen[p] = true;
  }
  for (const auto& p : choices) {
    std::vector<int> prefix(p.begin(), p.end() - 1);
    if (!prefix.empty() && !seen.count(prefix))
      fail(where, ": tree path ", nlohmann::json(p).dump(), " has no parent path ",
           nlohmann::json(prefix).dump());
  }
  return choices;
}

}  // namespace eagle2
