// Filters, tests, string and mapping methods, indexing and slicing, `~` and `in`, each with the
// reference's behaviour (which is JavaScript's where it differs from Python's Jinja2).
#include <gtest/gtest.h>

#include "support/jinja_render.h"

namespace eagle2 {
namespace {

using nlohmann::ordered_json;
using test::render;
using test::render_error;

const ordered_json kMessages = {{"messages", ordered_json::parse(R"([
  {"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
  {"role": "assistant", "content": "A1"}, {"role": "user", "content": "U2", "name": "bob"}])")}};

TEST(JinjaFilters, TojsonWritesHuggingFacesJson) {
  const ordered_json x = {
      {"x", ordered_json::parse(R"({"b": [1, 2.5, "s\"q", null, true], "a": {"é": "\n"}})")}};
  // ", " and ": " separators, key order kept, non-ASCII text unescaped.
  EXPECT_EQ(render("{{ x | tojson }}", x),
            R"({"b": [1, 2.5, "s\"q", null, true], "a": {"é": "\n"}})");
  // With indent the item separator loses its space; empty containers stay [] and {}.
  EXPECT_EQ(render("{{ {'a': [1, {}], 'b': []} | tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
  EXPECT_EQ(render("{{ x | tojson(ensure_ascii=true) }}", {{"x", "é😀"}}),
            R"("\u00e9\ud83d\ude00")");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}"), R"({"a": 2, "b": 1})");
  EXPECT_EQ(render("{{ [1, 2] | tojson(separators=(',', ':')) }}"), "[1,2]");
  // An integral float is a JavaScript number: 1.0 is written 1. Undefined is null.
  EXPECT_EQ(render("{{ 1.0 | tojson }} {{ nothing | tojson }} {{ '\x01' | tojson }}"),
            "1 null \"\\u0001\"");
  EXPECT_EQ(render_error("{{ range | tojson }}"),
            "t.jinja:1: a function cannot be converted to JSON");
}

TEST(JinjaFilters, TextFilters) {
  EXPECT_EQ(render("[{{ '  a b \n\t' | trim }}] [{{ '\u00a0x\u3000' | trim }}]"), "[a b] [x]");
  EXPECT_EQ(render("{{ 'Hello Wörld' | upper }} {{ 'HELLO WÖRLD' | lower }} {{ 'ß' | upper }}"),
            "HELLO WÖRLD hello wörld SS");
  EXPECT_EQ(render("{{ 'a-b-c' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }} {{ 'ab' | "
                   "replace('', '.') }}"),
            "a+b+c bba .a.b.");
  EXPECT_EQ(render("{{ 'hello wORLD' | title }} {{ 'hello' | capitalize }}"), "Hello WORLD Hello");
  EXPECT_EQ(render("{{ 'a\nb\n\nc' | indent }}|{{ 'a\nb' | indent(2, true) }}"),
            "a\n    b\n\n    c|  a\n  b");
  EXPECT_EQ(
      render("{{ 1 | string }} {{ 1.0 | string }} {{ true | string }} {{ [1, 'a'] | string }}"),
      "1 1.0 true [1, \"a\"]");
  EXPECT_EQ(render_error("{{ none | string }}"),
            "t.jinja:1: filter 'string' does not apply to none");
  EXPECT_EQ(render_error("{{ 5 | trim }}"),
            "t.jinja:1: filter 'trim' does not apply to an integer");
}

TEST(JinjaFilters, LengthCountsUtf16UnitsLikeJavaScript) {
  EXPECT_EQ(render("{{ 'héllo' | length }} {{ '😀' | length }} {{ [1, 2] | length }} {{ {'a': 1} | "
                   "length }}"),
            "5 2 2 1");
  EXPECT_EQ(render("{{ 'abc'.length }} {{ [1].length }}"), "3 1");
  EXPECT_EQ(render_error("{{ 5 | length }}"),
            "t.jinja:1: filter 'length' does not apply to an integer");
}

TEST(JinjaFilters, ListFilters) {
  EXPECT_EQ(render("{{ [1, 'a', none, 2.0, true, [3, 4]] | join }} {{ ['a', 'b'] | join(', ') }}"),
            "1a2true3,4 a, b");
  EXPECT_EQ(render("{{ [1, 2, 3] | first }} {{ [1, 2, 3] | last }} [{{ [] | first }}]"), "1 3 []");
  EXPECT_EQ(render("{{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ [3, 1, 2] | "
                   "sort(reverse=true) }}"),
            "[1, 2, 3] [\"A\", \"b\", \"c\"] [3, 2, 1]");
  EXPECT_EQ(render("{{ [1, 2, 1, '1', 1.0] | unique }} {{ [1, 2] | reverse }} {{ [1] | list }}"),
            "[1, 2, \"1\"] [2, 1] [1]");
  EXPECT_EQ(render("{{ messages | map(attribute='role') | join(',') }}", kMessages),
            "system,user,assistant,user");
  EXPECT_EQ(render("{{ messages | map(attribute='name', default='-') | join(',') }}", kMessages),
            "-,-,-,bob");
}

TEST(JinjaFilters, SelectAndRejectByAttributeOrTest) {
  EXPECT_EQ(render("{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') "
                   "| join }}",
                   kMessages),
            "U1U2");
  EXPECT_EQ(render("{{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='content') "
                   "| join }}",
                   kMessages),
            "SA1");
  EXPECT_EQ(render("{{ messages | selectattr('name') | list | length }} {{ messages | "
                   "rejectattr('name') | list | length }}",
                   kMessages),
            "1 3");
  // reject and select (Jinja's; the reference lacks them), as in Llama 3.1's builtin_tools line.
  EXPECT_EQ(render("{{ ['brave_search', 'code_interpreter', 'wolfram'] | reject('equalto', "
                   "'code_interpreter') | join(', ') }}"),
            "brave_search, wolfram");
  EXPECT_EQ(render("{{ [0, 1, '', 'a'] | select | list }} {{ [1, 2, 3] | select('odd') | list }}"),
            "[1, \"a\"] [1, 3]");
  EXPECT_EQ(render_error("{{ [1, 2] | selectattr('x') | list }}"),
            "t.jinja:1: filter 'selectattr' applies to a list of mappings");
}

TEST(JinjaFilters, ItemsDefaultAndNumbers) {
  EXPECT_EQ(render("{% for k, v in {'x': 1, 'y': 'z'} | items %}{{ k }}:{{ v }} {% endfor %}"),
            "x:1 y:z ");
  EXPECT_EQ(
      render("{{ missing | default('d') }} {{ '' | default('d') }} {{ '' | default('d', true) }} "
             "{{ none | default('d') }} {{ 0 | default('d', boolean=true) }} [{{ missing | default "
             "}}]"),
      "d  d  d []");
  EXPECT_EQ(render("{{ -3 | abs }} {{ '42' | int }} {{ '4.5x' | float }} {{ 'x' | int }} {{ 'x' | "
                   "int(7) }} {{ 3.9 | int }}"),
            "3 42 4.5 0 7 3");
  EXPECT_EQ(render("{{ {'b': 2, 'a': 1} | dictsort }}"), "[[\"a\", 1], [\"b\", 2]]");
  EXPECT_EQ(render_error("{{ [1] | items }}"),
            "t.jinja:1: filter 'items' does not apply to a list");
  EXPECT_EQ(render_error("{{ 1 | nosuch }}"), "t.jinja:1: unknown filter 'nosuch'");
}

TEST(JinjaTests, TypeAndValueTests) {
  EXPECT_EQ(render("{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ none is none }} "
                   "{{ x is not none }}",
                   {{"x", 1}}),
            "true false true true true");
  EXPECT_EQ(render("{{ 's' is string }} {{ 1 is string }} {{ {} is mapping }} {{ [] is mapping }} "
                   "{{ [] is iterable }} "
                   "{{ 's' is iterable }} {{ {} is iterable }}"),
            "true false true false true true false");
  EXPECT_EQ(
      render("{{ 1 is number }} {{ 1.5 is number }} {{ '1' is number }} {{ true is number }}"),
      "true true false false");
  EXPECT_EQ(render("{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ "
                   "none is false }}"),
            "true false true false false");
  EXPECT_EQ(render("{{ 3 is odd }} {{ 3 is even }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ "
                   "range is callable }}"),
            "true false true true true");
  EXPECT_EQ(render_error("{{ 1 is nosuch }}"), "t.jinja:1: unknown test 'nosuch'");
  EXPECT_EQ(render_error("{{ 1.5 is odd }}"),
            "t.jinja:1: test 'odd' applies to integers, not to a float");
}

TEST(JinjaMethods, StringMethods) {
  EXPECT_EQ(render("{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith('lo') }} {{ "
                   "'Hello'.startswith(('x', 'H')) }}"),
            "true true true");
  EXPECT_EQ(
      render("{{ 'a,b,,c'.split(',') }} {{ '  a  b c '.split() }} {{ 'a b c'.split(' ', 1) }}"),
      "[\"a\", \"b\", \"\", \"c\"] [\"a\", \"b\", \"c\"] [\"a\", \"b c\"]");
  // strip, lstrip and rstrip trim white space whatever argument they get, as in the reference.
  EXPECT_EQ(
      render("[{{ '\n x \n'.strip() }}] [{{ '\n x \n'.lstrip() }}] [{{ '\n x \n'.rstrip() }}] "
             "[{{ 'xxhixx'.strip('x') }}] [{{ '\n\n  x'.lstrip('\n') }}]"),
      "[x] [x \n] [\n x] [xxhixx] [x]");
  EXPECT_EQ(render("{{ 'a-a-a'.replace('-', '+') }} {{ 'a-a-a'.replace('-', '+', 1) }} {{ 'hello "
                   "world'.title() }}"),
            "a+a+a a+a-a Hello World");
  EXPECT_EQ(render("{{ 'Hi'.upper() }}{{ 'Hi'.lower() }}"), "HIhi");
  EXPECT_EQ(render_error("{{ 'x'.split('') }}"), "t.jinja:1: split(): empty separator");
}

TEST(JinjaMethods, MappingMethods) {
  const ordered_json m = {{"m", ordered_json::parse(R"({"a": 1, "b": [2]})")}};
  EXPECT_EQ(render("{{ m.get('a') }} {{ m.get('z') }} {{ m.get('z', 'dflt') }} {{ m.keys() }} {{ "
                   "m.values() }} {{ m.items() }}",
                   m),
            "1  dflt [\"a\", \"b\"] [1, [2]] [[\"a\", 1], [\"b\", [2]]]");
  // A key of the mapping wins over a method of the same name.
  EXPECT_EQ(render("{{ m.items }}", {{"m", {{"items", "mine"}}}}), "mine");
}

TEST(JinjaIndexing, AttributesItemsAndSlices) {
  const ordered_json x = {{"xs", {0, 1, 2, 3, 4}}, {"m", {{"role", "user"}}}};
  EXPECT_EQ(
      render(
          "{{ m.role }} {{ m['role'] }} [{{ m.missing }}] [{{ m.missing.deeper }}] [{{ none.x }}]",
          x),
      "user user [] [] []");
  EXPECT_EQ(
      render("{{ xs[0] }} {{ xs[-1] }} [{{ xs[9] }}] {{ xs.1 }} {{ 'abc'[1] }} {{ 'abc'[-1] }}", x),
      "0 4 [] 1 b c");
  EXPECT_EQ(
      render(
          "{{ xs[1:] }} {{ xs[:2] }} {{ xs[::-1] }} {{ xs[-2:] }} {{ xs[::2] }} {{ xs[3:0:-1] }}",
          x),
      "[1, 2, 3, 4] [0, 1] [4, 3, 2, 1, 0] [3, 4] [0, 2, 4] [3, 2, 1]");
  // The reference's slice: a negative step with stop -1 runs to the first item (Python: empty).
  EXPECT_EQ(render("{{ xs[2:-1:-1] }}", x), "[2, 1, 0]");
  EXPECT_EQ(render("{{ 'héllo😀'[1:] }} {{ 'héllo😀'[::-1] }}"), "éllo😀 😀olléh");
  EXPECT_EQ(render_error("{{ missing[0] }}"), "t.jinja:1: cannot index undefined by integer");
  EXPECT_EQ(render_error("{{ m[0] }}", x),
            "t.jinja:1: a mapping is indexed by strings, not by integer");
  EXPECT_EQ(render_error("{{ 5[1:] }}"),
            "t.jinja:1: only lists and strings can be sliced, not integer");
}

TEST(JinjaOperators, ConcatenationMembershipAndEquality) {
  EXPECT_EQ(render("{{ 'a' ~ 1 ~ 1.0 ~ 2.5 ~ true ~ [1, [2, 'b']] ~ {'k': 1} }}"),
            "a112.5true1,[2, \"b\"][object Map]");
  EXPECT_EQ(render("{{ 'n=' + 3 }} {{ 3 + 'x' }} {{ [1] + [2, 3] }}"), "n=3 3x [1, 2, 3]");
  EXPECT_EQ(
      render(
          "{{ 'ell' in 'hello' }} {{ 'z' not in 'hello' }} {{ 2 in [1, 2] }} {{ '2' in [1, 2] }} "
          "{{ 'k' in {'k': 1} }} {{ 1 in nothing }}"),
      "true true true false true false");
  // == is JavaScript's loose equality: numbers meet strings as numbers, lists compare by identity.
  EXPECT_EQ(render("{{ 1 == 1.0 }} {{ 1 == '1' }} {{ 0 == '' }} {{ true == 1 }} {{ none == nothing "
                   "}} {{ [1] == [1] }}"),
            "true true true true true false");
  EXPECT_EQ(
      render("{{ messages[3] == (messages | selectattr('role', 'equalto', 'user') | list)[-1] }}",
             kMessages),
      "true");
  EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 6 / 2 }} {{ 7 / 0 }} {{ "
                   "2 ** 10 }}"),
            "3 -4 -1 3.5 3.0 Infinity 1024");
  EXPECT_EQ(render_error("{{ 'a' ~ none }}"),
            "t.jinja:1: operator '~' does not apply to none (string ~ none)");
  EXPECT_EQ(render_error("{{ x + 1 }}"),
            "t.jinja:1: operator '+' does not apply to undefined values (undefined + integer)");
  EXPECT_EQ(render_error("{{ 'a' < 'b' }}"),
            "t.jinja:1: operator '<' does not apply to string and string");
}

TEST(JinjaGlobals, RangeRaiseAndStrftime) {
  EXPECT_EQ(render("{{ range(3) }} {{ range(1, 4) }} {{ range(10, 0, -3) }} {{ range(0) }}"),
            "[0, 1, 2] [1, 2, 3] [10, 7, 4, 1] []");
  EXPECT_EQ(render("{{ strftime_now('%Y-%m-%d %H:%M') }}|{{ strftime_now('%d %b %Y') }}|{{ "
                   "strftime_now('%B %d, %Y') }}|"
                   "{{ strftime_now('100%% %j') }}"),
            "2026-11-30 00:00|30 Nov 2026|November 30, 2026|100% %j");
  EXPECT_EQ(render_error("{{ range(1, 2, 0) }}"), "t.jinja:1: range() step must not be zero");
  EXPECT_EQ(render_error("{{ raise_exception('Custom ' ~ 42) }}"),
            "t.jinja:1: raise_exception: Custom 42");
}

}  // namespace
}  // namespace eagle2
