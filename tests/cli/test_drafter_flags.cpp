// generate's drafter flags: the shorthands (--tree, --total-tokens, --depth, --draft-top-k,
// --choices, --calibrate) build the same DrafterSpec as --spec, and the two cannot be mixed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "drafter_flags.h"
#include "support/errors.h"
#include "support/shared_data.h"

namespace eagle2 {
namespace {

// The CLI builds the public API's spec (eagle2/drafter.h).
using api::DrafterSpec;
using api::parse_drafter_spec;
using test::error_of;

// Parses `args` (shell-free words) as generate's drafter flags.
cli::DrafterFlags parse(const std::string& args) {
  CLI::App app{"test"};
  cli::DrafterFlags flags;
  cli::add_drafter_flags(app, flags);
  std::vector<std::string> words;
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11's vector form
  app.parse(reversed);
  return flags;
}

DrafterSpec spec_of(const std::string& args) {
  return cli::drafter_spec_from_flags(parse(args));
}

TEST(DrafterFlags, ShorthandsBuildTheSameSpecAsSpec) {
  for (const auto& [shorthand, spec] : std::vector<std::pair<std::string, std::string>>{
           {"--draft h", "dynamic:60:5:10"},
           {"--draft h --tree dynamic", "dynamic"},
           {"--tree dynamic --total-tokens 60 --depth 5 --draft-top-k 10", "dynamic:60:5:10"},
           {"--tree dynamic --total-tokens 16 --depth 3 --draft-top-k 4", "dynamic:16:3:4"},
           {"--draft h --total-tokens 8 --depth 6 --draft-top-k 2 --calibrate",
            "dynamic:8:6:2:cal"},
           {"--draft h --total-tokens auto", "dynamic:auto"},
           {"--draft h --total-tokens auto --depth 4 --draft-top-k 8 --calibrate",
            "dynamic:auto:4:8:cal"},
           {"--tree chain", "chain:5"},
           {"--tree chain --depth 5", "chain:5"},
           {"--tree chain --depth 2", "chain:2"},
           {"--tree static", "static"},
           {"--tree static --choices [[0],[1],[0,0]]", "static:[[0],[1],[0,0]]"},
           {"--tree lookup", "lookup"},
           {"--tree lookup --depth 3", "lookup:3"},
           {"", "plain"},
           {"--draft h --tree none", "plain"},
       }) {
    EXPECT_EQ(spec_of(shorthand), parse_drafter_spec(spec)) << shorthand << " vs " << spec;
    EXPECT_EQ(spec_of(shorthand).to_string(), parse_drafter_spec(spec).to_string()) << shorthand;
    EXPECT_EQ(spec_of("--spec " + spec), parse_drafter_spec(spec)) << spec;
  }
}

TEST(DrafterFlags, ChoicesFromAFile) {
  const std::string path = test::temp_dir("drafter_flags") + "/tree.json";
  std::ofstream(path) << "[[0], [1], [0, 0]]\n";
  EXPECT_EQ(spec_of("--tree static --choices " + path),
            parse_drafter_spec("static:[[0],[1],[0,0]]"));
}

TEST(DrafterFlags, SpecWithAShorthandIsAFlagError) {
  for (const char* args : {"--spec chain:3 --depth 3", "--tree chain --spec chain:3",
                           "--spec dynamic --calibrate", "--spec dynamic --total-tokens 60",
                           "--spec dynamic --draft-top-k 4", "--spec static --choices [[0]]"}) {
    try {
      parse(args);
      ADD_FAILURE() << args << ": accepted";
    } catch (const CLI::ValidationError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--spec: cannot be combined with --", 0), 0u)
          << e.what();
    }
  }
  EXPECT_THROW(parse("--spec magic"), CLI::ValidationError);
}

TEST(DrafterFlags, CalibrateIsForDynamicTreesOnly) {
  EXPECT_EQ(error_of([] { spec_of("--tree chain --calibrate"); }),
            "--calibrate applies to --tree dynamic only");
}

}  // namespace
}  // namespace eagle2
