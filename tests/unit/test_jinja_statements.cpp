// Statements: if/elif/else, for (loop variables, else, filters, break and continue), set (names,
// unpacking, blocks, namespaces), macros (defaults, keyword arguments, varargs/kwargs, caller),
// call and filter blocks, and the reference's scoping, with the runtime errors each can raise.
#include <gtest/gtest.h>

#include "support/jinja_render.h"

namespace eagle2 {
namespace {

using nlohmann::ordered_json;
using test::render;
using test::render_error;

TEST(JinjaIf, TakesTheFirstTrueBranch) {
  const std::string t =
      "{% if x == 1 %}one{% elif x == 2 %}two{% elif x > 2 %}many{% else %}none{% endif %}";
  EXPECT_EQ(render(t, {{"x", 1}}), "one");
  EXPECT_EQ(render(t, {{"x", 2}}), "two");
  EXPECT_EQ(render(t, {{"x", 7}}), "many");
  EXPECT_EQ(render(t, {{"x", 0}}), "none");
  // Python truthiness: empty containers and strings, zero, none and undefined are false; a
  // namespace is always true.
  EXPECT_EQ(render("{% if [] or {} or '' or 0 or 0.0 or none or nothing %}t{% else %}f{% endif %}"),
            "f");
  EXPECT_EQ(render("{% if [0] and {'a': 0} and ' ' and namespace() %}t{% endif %}"), "t");
}

TEST(JinjaFor, LoopVariables) {
  EXPECT_EQ(
      render("{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
             "{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }} {% endfor %}"),
      "1032truefalse3 2121falsefalse3 3210falsetrue3 ");
  EXPECT_EQ(render("{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }} {% endfor %}"),
            "-2 1-3 2- ");
  // Nested loops each have their own loop variable.
  EXPECT_EQ(render("{% for a in [1, 2] %}{% for b in [1, 2, 3] %}{{ loop.length }}{% endfor %}"
                   "{{ loop.length }}{% endfor %}"),
            "33323332");
}

TEST(JinjaFor, ElseRunsWhenNothingIterated) {
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in [1] %}x{% else %}empty{% endfor %}"), "x");
  EXPECT_EQ(render("{% for x in [1, 2] if x > 5 %}x{% else %}none kept{% endfor %}"), "none kept");
}

TEST(JinjaFor, OverMappingsPairsAndFilters) {
  const ordered_json m = {{"m", ordered_json::parse(R"({"b": 1, "a": [2]})")}};
  EXPECT_EQ(render("{% for k in m %}{{ k }}{% endfor %}", m), "ba");  // keys, in insertion order
  EXPECT_EQ(render("{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}", m), "b=1;a=[2];");
  EXPECT_EQ(render("{% for k, v in m | items %}{{ k }}{% endfor %}", m), "ba");
  EXPECT_EQ(render("{% for x in range(10) if x is odd %}{{ x }}/{{ loop.length }} {% endfor %}"),
            "1/5 3/5 5/5 7/5 9/5 ");
  EXPECT_EQ(render_error("{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
            "t.jinja:1: cannot unpack 3 values into 2 loop variables");
  EXPECT_EQ(render_error("{% for x in 5 %}{% endfor %}"), "t.jinja:1: cannot loop over integer");
  EXPECT_EQ(render_error("{% for x in missing %}{% endfor %}"),
            "t.jinja:1: cannot loop over undefined");
}

TEST(JinjaFor, BreakAndContinueDropTheirIterationsOutputAsTheReferenceDoes) {
  EXPECT_EQ(
      render("{% for x in [1, 2, 3, 4] %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
      "12");
  EXPECT_EQ(
      render("{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
      "13");
  // Unlike Python's Jinja2, what the iteration printed before break/continue is dropped.
  EXPECT_EQ(
      render(
          "{% for x in [1, 2, 3] %}<{{ x }}>{% if x == 2 %}{% continue %}{% endif %}{% endfor %}"),
      "<1><3>");
  EXPECT_EQ(
      render("{% for x in [1, 2, 3] %}{{ x }}{% if x == 2 %}{% break %}{% endif %}{% endfor %}"),
      "1");
  // An iteration ending in continue does not count as done, so else still runs.
  EXPECT_EQ(render("{% for x in [1, 2] %}{% continue %}{% else %}else{% endfor %}"), "else");
  // break in a for's else block leaves the enclosing loop.
  EXPECT_EQ(render("{% for a in [1, 2] %}{{ a }}{% for b in [] %}{% else %}{% break %}{% endfor "
                   "%}{% endfor %}"),
            "");
}

TEST(JinjaSet, NamesUnpackingBlocksAndScopes) {
  EXPECT_EQ(render("{% set x = 1 %}{% set a, b = 2, 3 %}{% set c, d = [4, 5] %}{{ x }}{{ a }}{{ b "
                   "}}{{ c }}{{ d }}"),
            "12345");
  EXPECT_EQ(render("{% set block %}[{{ 1 + 1 }}]{% endset %}{{ block }}{{ block | length }}"),
            "[2]3");
  // if opens no scope; a for loop does, so what it sets stays inside (use a namespace instead).
  EXPECT_EQ(render("{% if true %}{% set x = 'in if' %}{% endif %}{{ x }}"), "in if");
  EXPECT_EQ(
      render("{% set x = 'out' %}{% for i in [1] %}{% set x = 'in' %}{{ x }}{% endfor %}{{ x }}"),
      "inout");
  EXPECT_EQ(render("{% for i in [1, 2] %}{% if i == 2 %}{{ kept }}{% endif %}{% set kept = i %}{% "
                   "endfor %}"),
            "1");
  EXPECT_EQ(render("{% set messages = messages[1:] %}{{ messages | length }}",
                   {{"messages", ordered_json::parse("[1, 2, 3]")}}),
            "2");
  EXPECT_EQ(render_error("{% set a, b = [1, 2, 3] %}"),
            "t.jinja:1: too many values to unpack in {% set %} (expected 2, got 3)");
  EXPECT_EQ(render_error("{% set a, b = 5 %}"), "t.jinja:1: cannot unpack integer in {% set %}");
}

TEST(JinjaSet, NamespacesCarryValuesOutOfLoops) {
  EXPECT_EQ(render("{% set ns = namespace(total=0, seen=false) %}{% for x in [1, 2, 3] %}"
                   "{% set ns.total = ns.total + x %}{% set ns.seen = true %}{% endfor %}{{ "
                   "ns.total }} {{ ns.seen }}"),
            "6 true");
  EXPECT_EQ(render("{% set ns = namespace({'a': 1}, b=2) %}{% set ns.c = 3 %}{{ ns }}"),
            "{\"a\": 1, \"b\": 2, \"c\": 3}");
  EXPECT_EQ(render("{% set ns = namespace([['k', 'v'], 'xy']) %}{{ ns.k }}{{ ns.x }}"), "vy");
  EXPECT_EQ(render_error("{% set d = {'a': 1} %}{% set d.a = 2 %}"),
            "t.jinja:1: cannot set an attribute of mapping; only a namespace() takes {% set "
            "ns.name = ... %}");
  EXPECT_EQ(render_error("{{ namespace(1, 2) }}"),
            "t.jinja:1: namespace() takes at most 1 positional argument, got 2");
}

TEST(JinjaMacro, DefaultsKeywordsAndSpecialArguments) {
  const std::string greet =
      "{% macro greet(name, greeting='Hello', end=greeting ~ '!') %}{{ greeting }}, {{ name }}{{ "
      "end }}{% endmacro %}";
  EXPECT_EQ(
      render(greet + "{{ greet('Ann') }}|{{ greet('Bo', 'Hi') }}|{{ greet(end='.', name='Cy') }}"),
      "Hello, AnnHello!|Hi, BoHi!|Hello, Cy.");
  EXPECT_EQ(render("{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m() }}"),
            "[]");  // a missing argument is undefined
  EXPECT_EQ(
      render(
          "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k='v') }}"),
      "1[2, 3]{\"k\": \"v\"}");
  EXPECT_EQ(
      render(
          "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}"),
      "321");
  EXPECT_EQ(render("{% macro m(a, b, c) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(*[1, 2], c=3) "
                   "}}{{ m(1, **{'b': 2, 'c': 3}) }}"),
            "123123");
  EXPECT_EQ(render_error("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
            "t.jinja:1: macro 'm' takes at most 1 argument(s), got 2");
  EXPECT_EQ(render_error("{% macro m(a) %}{% endmacro %}{{ m(b=2) }}"),
            "t.jinja:1: macro 'm' has no parameter 'b'");
  EXPECT_EQ(render_error("{% macro m(a) %}{% endmacro %}{{ m(a=1, a=2) }}"),
            "t.jinja:1: keyword argument 'a' is given twice");
}

TEST(JinjaMacro, SeesTheCallersScopeAsTheReferenceDoes) {
  // A macro's scope hangs off the scope it is called from (the reference's dynamic scoping).
  EXPECT_EQ(render("{% macro show() %}{{ v }}{% endmacro %}{% set v = 1 %}{{ show() }}"
                   "{% for i in [1] %}{% set v = 2 %}{{ show() }}{% endfor %}"),
            "12");
  // What a macro sets stays inside it.
  EXPECT_EQ(render("{% macro m() %}{% set inner = 1 %}{% endmacro %}{{ m() }}[{{ inner }}]"), "[]");
}

TEST(JinjaCall, CallerRendersTheBlock) {
  EXPECT_EQ(render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                   "{% call wrap('b') %}x{{ 1 + 1 }}{% endcall %}"),
            "<b>x2</b>");
  EXPECT_EQ(render("{% macro each(xs) %}{% for x in xs %}{{ caller(x, loop.index) }}{% endfor %}{% "
                   "endmacro %}"
                   "{% call(item, n) each(['a', 'b']) %}{{ n }}{{ item }} {% endcall %}"),
            "1a 2b ");
  EXPECT_EQ(render_error("{% macro m() %}{{ caller(1) }}{% endmacro %}{% call m() %}{% endcall %}"),
            "t.jinja:1: the call block's caller() takes at most 0 argument(s), got 1");
}

TEST(JinjaFilterBlock, FiltersItsBody) {
  EXPECT_EQ(render("{% filter upper %}a{{ 'b' }}{% endfilter %}"), "AB");
  EXPECT_EQ(render("{% filter replace('a', 'o') %}banana{% endfilter %}"), "bonono");
  EXPECT_EQ(render("{% filter length %}abc{% endfilter %}"), "3");
}

TEST(JinjaRuntimeErrors, NameTheLineOfTheInnermostFailure) {
  EXPECT_EQ(render_error("a\n{% macro m() %}\n{{ 1 + none }}\n{% endmacro %}\n{{ m() }}"),
            "t.jinja:3: operator '+' does not apply to none (integer + none)");
  EXPECT_EQ(render_error("{{ x.append(1) }}", {{"x", ordered_json::array()}}),
            "t.jinja:1: cannot call 'append': there is no such method here");
  EXPECT_EQ(render_error("{{ 'abc'() }}"), "t.jinja:1: cannot call string");
  EXPECT_EQ(
      render_error("\n\n{{ raise_exception('Only user and assistant roles are supported!') }}"),
      "t.jinja:3: raise_exception: Only user and assistant roles are supported!");
}

}  // namespace
}  // namespace eagle2
