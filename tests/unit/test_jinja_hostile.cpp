// Hostile templates and inputs end in one clear error, never a crash, a hang or unbounded
// recursion or memory: nesting, recursion, loops, output, allocation and input depth are all
// bounded (jinja_limits.h). Limits are lowered where the default would only make the test slow.
#include <gtest/gtest.h>

#include <chrono>

#include "support/jinja_render.h"

namespace eagle2 {
namespace {

using nlohmann::ordered_json;
using test::render;
using test::render_error;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(JinjaHostile, DeepNestingIsASyntaxError) {
  const std::string nested = "t.jinja:1: syntax error: the template nests deeper than 100 levels";
  EXPECT_EQ(render_error("{{ " + repeat("(", 20000) + "1" + repeat(")", 20000) + " }}"), nested);
  EXPECT_EQ(render_error("{{ " + repeat("[", 20000) + " }}"), nested);
  EXPECT_EQ(render_error("{{ " + repeat("not ", 20000) + "1 }}"), nested);
  EXPECT_EQ(render_error("{{ " + repeat("- ", 20000) + "1 }}"), nested);
  EXPECT_EQ(render_error("{{ 1" + repeat(" ~ 1", 20000) + " }}"), nested);  // a chain nests too
  EXPECT_EQ(render_error("{{ f" + repeat("()", 20000) + " }}"), nested);
  EXPECT_EQ(render_error(repeat("{% if true %}", 20000)), nested);
  // Real templates nest far less and render fine.
  EXPECT_EQ(render(repeat("{% if true %}", 40) + "deep" + repeat("{% endif %}", 40)), "deep");
  EXPECT_EQ(render("{{ 1" + repeat(" + 1", 90) + " }}"), "91");
  // A long elif chain does not nest.
  std::string chain = "{% if x == 0 %}0";
  for (int i = 1; i < 5000; ++i)
    chain += "{% elif x == " + std::to_string(i) + " %}" + std::to_string(i);
  EXPECT_EQ(render(chain + "{% endif %}", {{"x", 4999}}), "4999");
}

TEST(JinjaHostile, RecursionIsBounded) {
  EXPECT_EQ(render_error("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
            "t.jinja:1: the template recursed deeper than 500 levels (a macro calling itself?)");
  EXPECT_EQ(render_error("{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n + 1) }}{% "
                         "endmacro %}{{ a(0) }}"),
            "t.jinja:1: the template recursed deeper than 500 levels (a macro calling itself?)");
}

TEST(JinjaHostile, LoopsAreBoundedBySteps) {
  jinja::Limits limits;
  limits.max_steps = 100000;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(
      render_error("{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}",
                   {}, limits),
      "t.jinja:1: the template took more than 100000 evaluation steps (limit)");
  // Work inside filters counts as well, not only the nodes evaluated.
  EXPECT_EQ(render_error("{% set xs = range(5000) %}{% for i in range(100) %}{{ xs | join('') | "
                         "length }}{% endfor %}",
                         {}, limits),
            "t.jinja:1: the template took more than 100000 evaluation steps (limit)");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
}

TEST(JinjaHostile, StringsOutputAndAllocationAreBounded) {
  jinja::Limits limits;
  limits.max_string_bytes = 1 << 20;
  limits.max_alloc_bytes = 64 << 20;
  EXPECT_EQ(render_error("{% set ns = namespace(s='0123456789') %}{% for i in range(40) %}"
                         "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                         {}, limits),
            "t.jinja:1: a string of 1310720 bytes exceeds the limit of 1048576 bytes");
  EXPECT_EQ(render_error("{% for i in range(200000) %}0123456789{% endfor %}", {}, limits),
            "t.jinja:1: a string of 1048580 bytes exceeds the limit of 1048576 bytes");
  EXPECT_NE(
      render_error(
          "{{ ('abcdefgh' | replace('', '0123456789') | replace('', '0123456789') "
          "| replace('', '0123456789') | replace('', '0123456789') | replace('', '0123456789')) "
          "| length }}",
          {}, limits)
          .find("exceeds the limit of 1048576 bytes"),
      std::string::npos);
  // Lists growing by copies: the allocation budget ends it.
  EXPECT_EQ(render_error("{% set ns = namespace(l=[]) %}{% for i in range(20000) %}{% set ns.l = "
                         "ns.l + [i] %}{% endfor %}",
                         {}, limits),
            "t.jinja:1: the template allocated more than 67108864 bytes (limit)");
  EXPECT_EQ(render_error("{{ range(100000000) | length }}", {}, limits),
            "t.jinja:1: the template allocated more than 67108864 bytes (limit)");
  EXPECT_EQ(render_error("{{ range(1000000000000000) }}"),
            "t.jinja:1: range() of 1000000000000000 numbers is too long");
}

TEST(JinjaHostile, HugeOrNotANumberCountsAreSafe) {
  jinja::Limits limits;
  limits.max_string_bytes = 1 << 20;
  EXPECT_EQ(render_error("{{ [[[[1]]]] | tojson(indent=1000000) }}", {}, limits),
            "t.jinja:1: JSON text exceeds the limit of 1048576 bytes");
  // 0 // 0 is an integer NaN (as in JavaScript); as a count it is 0.
  EXPECT_EQ(
      render(
          "{{ 'a\nb' | indent(0 // 0) }}|{{ [1] | tojson(indent=0 // 0) }}|{{ [1, 2][0 // 0] }}"),
      "a\nb|[1]|1");
  EXPECT_EQ(render("{{ range(0 // 0) }} {{ [1, 2, 3][::(0 // 0)] }}"), "[] []");
}

TEST(JinjaHostile, SelfContainingAndDeepValues) {
  const std::string deep = "a value nests deeper than 128 levels (or contains itself)";
  EXPECT_EQ(render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
            "t.jinja:1: " + deep);
  EXPECT_EQ(render_error("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}"),
            "t.jinja:1: " + deep);
  // A chain of 20000 nested lists is built, measured, and freed without recursion.
  const std::string build =
      "{% set ns = namespace(v=[]) %}{% for i in range(20000) %}{% set ns.v = [ns.v] %}{% endfor "
      "%}";
  EXPECT_EQ(render(build + "{{ ns.v | length }}"), "1");
  EXPECT_EQ(render_error(build + "{{ ns.v }}"), "t.jinja:1: " + deep);
  EXPECT_EQ(render_error(build + "{{ ns.v ~ '' }}"), "t.jinja:1: " + deep);
}

TEST(JinjaHostile, InputsAreChecked) {
  ordered_json deep = ordered_json::array();
  for (int i = 0; i < 2000; ++i) deep = ordered_json::array({deep});
  EXPECT_EQ(render_error("{{ x }}", {{"x", deep}}),
            "t.jinja: variable 'x': the input nests deeper than 128 levels");
  EXPECT_EQ(render_error("{{ x }}", {{"x", std::string("\xff")}}),
            "t.jinja: variable 'x': an input string is not valid UTF-8");
  EXPECT_EQ(render_error("{{ true }}", {{"true", 1}}),
            "t.jinja: the variable 'true' would replace a built-in");
  jinja::Limits limits;
  limits.max_template_bytes = 1000;
  EXPECT_EQ(render_error(std::string(1001, 'x'), {}, limits),
            "t.jinja: the template has 1001 bytes, more than the limit of 1000");
}

}  // namespace
}  // namespace eagle2
