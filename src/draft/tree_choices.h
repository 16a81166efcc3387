// Static tree shapes: paths of sibling ranks, EAGLE-1's default shape, chains, and their JSON form
// (--choices, static:JSON specs).
#pragma once

#include <string>
#include <vector>

namespace eagle2 {

// A static tree given as paths of sibling ranks ([0, 1] = the 2nd child of the 1st child of the
// root); prefixes of every path must be listed before it.
using TreeChoices = std::vector<std::vector<int>>;

// EAGLE-1's mc_sim_7b_63 shape (26 tokens with the root).
const TreeChoices& mc_sim_7b_63();
// A chain of depth + 1 draft tokens (top-1 at every level), as choices.
TreeChoices chain_choices(int depth);
// Parses a JSON list of paths, e.g. "[[0], [1], [0, 0]]"; Error on malformed input or a path
// whose prefix is missing.
TreeChoices parse_tree_choices(const std::string& json_text, const std::string& where);

}  // namespace eagle2
