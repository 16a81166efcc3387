// The streaming stop-string matcher: a stop string never reaches the output, however the text is
// split into increments, and nothing that cannot begin a stop string is held back.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/stop_strings.h"

namespace eagle2::server {
namespace {

// Feeds the pieces one by one; returns everything emitted (flush() included when no stop hit) and
// whether a stop string was hit.
std::pair<std::string, bool> run(const std::vector<std::string>& stops,
                                 const std::vector<std::string>& pieces) {
  StopMatcher m(stops);
  std::string out;
  for (const std::string& p : pieces) {
    const StopMatcher::Result r = m.feed(p);
    out += r.text;
    if (r.stopped) return {out, true};
  }
  return {out + m.flush(), false};
}

TEST(StopStrings, NoStopsPassesEverythingThroughAtOnce) {
  StopMatcher m;
  EXPECT_FALSE(m.active());
  EXPECT_EQ(m.feed("hello ").text, "hello ");
  EXPECT_EQ(m.feed("world").text, "world");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStrings, StopInsideOneIncrementCutsBeforeIt) {
  const auto [out, stopped] = run({"\n\n"}, {"def f():\n    pass\n\nclass"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "def f():\n    pass");
}

TEST(StopStrings, StopSplitAcrossIncrementsIsHeldBackThenCut) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.feed("abc E").text, "abc ");  // "E" may begin END
  StopMatcher::Result r = m.feed("N");
  EXPECT_EQ(r.text, "");  // "EN" still may
  EXPECT_FALSE(r.stopped);
  r = m.feed("D and more");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.feed("ignored").text, "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStrings, HeldTextIsReleasedWhenItCannotBecomeAStop) {
  StopMatcher m({"END"});
  EXPECT_EQ(m.feed("xE").text, "x");
  EXPECT_EQ(m.feed("Nx").text, "ENx");  // "ENx" is no prefix of END
  EXPECT_EQ(m.feed("EN").text, "");
  EXPECT_EQ(m.flush(), "EN");  // the end: no stop can complete
}

TEST(StopStrings, EverySplitOfTheTextGivesTheSameOutput) {
  const std::string text = "one two <stop> three";
  for (size_t a = 0; a <= text.size(); ++a) {
    for (size_t b = a; b <= text.size(); ++b) {
      const auto [out, stopped] =
          run({"<stop>"}, {text.substr(0, a), text.substr(a, b - a), text.substr(b)});
      EXPECT_TRUE(stopped) << a << " " << b;
      EXPECT_EQ(out, "one two ") << a << " " << b;
    }
  }
}

TEST(StopStrings, OneCharacterIncrementsOfOverlappingStops) {
  // "aab": after "aa" the tail "aa" is not a prefix of "aab"... but "a" is; the matcher must keep
  // the right tail so that the overlapping occurrence is found.
  std::vector<std::string> chars;
  for (const char c : std::string("xaaab y")) chars.push_back(std::string(1, c));
  const auto [out, stopped] = run({"aab"}, chars);
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "xa");
}

TEST(StopStrings, TheEarliestOfSeveralStopsWins) {
  auto [out, stopped] = run({"world", "lo w"}, {"hello world"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "hel");
  // Held back for the longer one while the shorter completes later in the same text.
  std::tie(out, stopped) = run({"abcd", "bc"}, {"xab", "cz"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "xa");
}

TEST(StopStrings, APrefixOfOneStopDoesNotHideAnother) {
  const auto [out, stopped] = run({"ab", "b!"}, {"a", "b"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "");
}

TEST(StopStrings, StopAtTheVeryStartAndEnd) {
  auto [out, stopped] = run({"###"}, {"###rest"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "");
  std::tie(out, stopped) = run({"###"}, {"text", "##", "#"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "text");
}

TEST(StopStrings, Utf8StopsAndHeldBytesStayWholeCharacters) {
  // "→" is E2 86 92; the text contains "←" (E2 86 90), which shares two bytes with it.
  StopMatcher m({"→end"});
  StopMatcher::Result r = m.feed("a←b→");
  EXPECT_EQ(r.text, "a←b");  // "→" may begin the stop; "←" never could
  r = m.feed("en");
  EXPECT_EQ(r.text, "");
  r = m.feed("d!");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");

  const auto [out, stopped] = run({"é"}, {"caf", "é au lait"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "caf");
  // A multi-byte character that merely shares its lead byte with the stop is released whole.
  const auto [out2, stopped2] = run({"éx"}, {"cafè", "!"});
  EXPECT_FALSE(stopped2);
  EXPECT_EQ(out2, "cafè!");
}

TEST(StopStrings, EmptyStopStringsAreIgnored) {
  const auto [out, stopped] = run({"", "zz"}, {"abc"});
  EXPECT_FALSE(stopped);
  EXPECT_EQ(out, "abc");
}

}  // namespace
}  // namespace eagle2::server
