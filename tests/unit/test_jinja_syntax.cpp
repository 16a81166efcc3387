// Reading templates: the reference's preprocessing (trim_blocks, lstrip_blocks, the generation
// tag), whitespace control, tokens, precedence, and syntax errors with their exact messages and
// the line of the original template they point at.
#include <gtest/gtest.h>

#include "chat/jinja_lexer.h"
#include "support/jinja_render.h"

namespace eagle2 {
namespace {

using test::render;
using test::render_error;

TEST(JinjaPreprocess, TrimsBlocksLstripsBlocksAndDropsOneTrailingNewline) {
  EXPECT_EQ(jinja::preprocess("a\n").text, "a");
  EXPECT_EQ(jinja::preprocess("a\n\n").text, "a\n");
  // The newline after %}, #} and -} goes; the indentation before {% and {# goes.
  EXPECT_EQ(jinja::preprocess("{% if x %}\n  y\n  {% endif %}\nz").text,
            "{% if x %}  y\n{% endif %}z");
  EXPECT_EQ(jinja::preprocess("\t {# c #}\nz").text, "{# c #}z");
  // Expressions are neither lstripped nor trimmed; text before a tag on its line stays.
  EXPECT_EQ(jinja::preprocess("  {{ x }}\n").text, "  {{ x }}");
  EXPECT_EQ(jinja::preprocess("a {% if %}").text, "a {% if %}");
  // A \r ends a line for lstrip_blocks too (JavaScript's multiline ^).
  EXPECT_EQ(jinja::preprocess("a\r  {% x %}").text, "a\r{% x %}");
}

TEST(JinjaPreprocess, KeepsTheOriginalOffsetOfEveryByte) {
  const jinja::Preprocessed p = jinja::preprocess("ab\n  {% x %}\ncd");
  ASSERT_EQ(p.text, "ab\n{% x %}cd");
  ASSERT_EQ(p.origin.size(), p.text.size());
  EXPECT_EQ(p.origin[3], 5u);    // '{' after the dropped indentation
  EXPECT_EQ(p.origin[10], 13u);  // 'c' after the dropped newline
}

TEST(JinjaPreprocess, DropsGenerationTagsKeepingWhiteSpaceUnlessStripped) {
  EXPECT_EQ(render("{% generation %}kept{% endgeneration %}"), "kept");
  EXPECT_EQ(render("a \n {%- generation -%} \n b \n {% endgeneration %} c"), "ab \n c");
  EXPECT_EQ(render("a {%generation%} b"), "a  b");
}

TEST(JinjaWhitespace, DashesStripOneSideEach) {
  EXPECT_EQ(render("a   {{- 'x' -}}   b"), "axb");
  EXPECT_EQ(render("a   {{- 'x' }}   b"), "ax   b");
  EXPECT_EQ(render("a   {{ 'x' -}}   b"), "a   xb");
  EXPECT_EQ(render("a \n {%- if true -%} \n b \n {%- endif -%} \n c"), "abc");
  EXPECT_EQ(render("a  {#- comment -#}  b"), "ab");
  // JavaScript white space, not only ASCII: no-break space, ideographic space, U+2028.
  EXPECT_EQ(render("x\u00a0\u3000 {{- 'y' -}} \u2028 z"), "xyz");
}

TEST(JinjaWhitespace, BlockLinesVanishAsHuggingFaceRendersThem) {
  EXPECT_EQ(
      render(
          "{% for x in [1, 2] %}\n  {% if x > 1 %}\n  big {{ x }}\n  {% endif %}\n{% endfor %}\n"),
      "  big 2\n");
}

TEST(JinjaTokens, SignsAreNumbersOrOperatorsByWhatPrecedes) {
  const auto tokens = jinja::tokenize("{{ a - 1 }}{{ [-1] }}{{ f(-x) }}", "t");
  std::vector<std::string> seen;
  for (const auto& t : tokens) seen.push_back(t.value);
  EXPECT_EQ(seen, (std::vector<std::string>{"{{", "a", "-", "1", "}}", "{{", "[", "-1", "]", "}}",
                                            "{{", "f", "(", "-", "x", ")", "}}"}));
  EXPECT_EQ(tokens[13].type, jinja::Tok::Unary);
  EXPECT_EQ(render("{{ 5-2 }} {{ [-1, - 2] }} {{ -(3) }}"), "3 [-1, -2] -3");
}

TEST(JinjaTokens, BracesInsideAnExpressionDoNotCloseIt) {
  EXPECT_EQ(render("{{ {'a': {'b': 1}} }}"), "{\"a\": {\"b\": 1}}");
  EXPECT_EQ(render("{% set x = {'a': {'b': 2}} %}{{ x.a.b }}"), "2");
}

TEST(JinjaTokens, StringEscapes) {
  EXPECT_EQ(render(R"({{ 'a\nb\t\\ \' \" \x41 \u00e9 \ud83d\ude00' }})"), "a\nb\t\\ ' \" A é 😀");
  EXPECT_EQ(render(R"({{ '\ud83d' }})"), "\xEF\xBF\xBD");  // a lone surrogate half prints as U+FFFD
  EXPECT_EQ(render("{{ 'a' \"b\" 'c' }}"), "abc");
}

TEST(JinjaPrecedence, FollowsTheReference) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10 - 2 - 3 }}"), "7 64 4 5");
  // Comparisons and `in` are one level, left to right: 1 == 1 in [true] is (1 == 1) in [true].
  EXPECT_EQ(render("{{ not 1 == 2 }} {{ true or false and false }} {{ 1 == 1 in [true] }}"),
            "true true true");
  // ~ and + are one level too: 'a' ~ 1 + 2 is ('a' ~ 1) + 2.
  EXPECT_EQ(render("{{ 'a' ~ 1 + 2 }} {{ [1, 2] | length + 1 }} {{ 3 * 'ab' | length }}"),
            "a12 3 6");
  EXPECT_EQ(render("{{ 'x' if 1 > 2 else 'y' if 2 > 1 else 'z' }}"), "y");
  // A filter binds tighter than a sign: -x|abs is (-x)|abs, as in the reference.
  EXPECT_EQ(render("{{ -3 | abs }} {{ - x | abs }}", {{"x", 3}}), "3 3");
}

TEST(JinjaSyntaxErrors, NameTheProblemAndTheLine) {
  EXPECT_EQ(render_error("{% if true %}unclosed"),
            "t.jinja:1: syntax error: {% if %} is never closed with {% endif %}");
  EXPECT_EQ(render_error("line 1\n{% endif %}"), "t.jinja:2: syntax error: unexpected {% endif %}");
  EXPECT_EQ(render_error("{{ 1 + }}"),
            "t.jinja:1: syntax error: expected an expression, found '}}'");
  EXPECT_EQ(render_error("a\n\n{{ 'open }}"), "t.jinja:3: syntax error: a string is never closed");
  EXPECT_EQ(render_error("{% nosuch %}"),
            "t.jinja:1: syntax error: unknown statement {% nosuch %}");
  EXPECT_EQ(render_error("{# open"),
            "t.jinja:1: syntax error: a comment {# is never closed with #}");
  EXPECT_EQ(render_error("a\nb\n  {{ @ }}"), "t.jinja:3: syntax error: unexpected character '@'");
  EXPECT_EQ(render_error("{% for in xs %}{% endfor %}"),
            "t.jinja:1: syntax error: expected 'in' after the loop variable, found 'xs'");
  EXPECT_EQ(render_error("{% macro m(a=1, b) %}{% endmacro %}"),
            "t.jinja:1: syntax error: a parameter without a default follows one with a default");
  EXPECT_EQ(render_error("{{ f(a=1, 2) }}"),
            "t.jinja:1: syntax error: a positional argument follows a keyword argument");
  EXPECT_EQ(render_error(R"({{ 'bad \q' }})"),
            "t.jinja:1: syntax error: unknown escape \\q in a string");
  EXPECT_EQ(render_error("{% for x in y %}\n{% macro m() %}{% break %}{% endmacro %}{% endfor %}"),
            "t.jinja:2: syntax error: {% break %} outside a for loop");
  EXPECT_EQ(render_error("{% set 1 = 2 %}"),
            "t.jinja:1: syntax error: {% set %} assigns to a name, names (a, b) or a namespace "
            "attribute (ns.x)");
  EXPECT_EQ(render_error("{{ x[1:2:3:4] }}"),
            "t.jinja:1: syntax error: a slice has at most three parts");
  EXPECT_EQ(render_error("{{ 'x' }"), "t.jinja:1: syntax error: expected '}}', found '}'");
  // Lines count in the original text, though trim_blocks removed newlines before the error.
  EXPECT_EQ(render_error("{% if a %}\n{% if b %}\n{% endif %}\n{{ ) }}\n{% endif %}"),
            "t.jinja:4: syntax error: expected an expression, found ')'");
}

TEST(JinjaSyntaxErrors, RejectTextThatIsNotUtf8) {
  EXPECT_EQ(render_error("ok \xC3\x28"), "t.jinja: the template is not valid UTF-8");
  EXPECT_EQ(render_error("\xED\xA0\x80"),
            "t.jinja: the template is not valid UTF-8");  // a surrogate
}

}  // namespace
}  // namespace eagle2
