// Values and text at the lowest level: JavaScript number formatting, how values print, loose
// and strict equality, JSON in (key order as JavaScript gives it) and out, and the UTF-8 helpers
// with JavaScript's white space, UTF-16 lengths and case mapping.
#include <gtest/gtest.h>

#include <cmath>

#include "chat/jinja_json.h"
#include "chat/jinja_text.h"
#include "chat/jinja_value.h"
#include "support/jinja_render.h"

namespace eagle2 {
namespace {

using jinja::Heap;
using jinja::Kind;
using jinja::Limits;
using jinja::Value;
using nlohmann::ordered_json;

TEST(JinjaValues, NumbersPrintAsJavaScriptPrintsThem) {
  EXPECT_EQ(jinja::js_number(0), "0");
  EXPECT_EQ(jinja::js_number(-0.0), "0");
  EXPECT_EQ(jinja::js_number(1.5), "1.5");
  EXPECT_EQ(jinja::js_number(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(jinja::js_number(1e21), "1e+21");
  EXPECT_EQ(jinja::js_number(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(jinja::js_number(1e-7), "1e-7");
  EXPECT_EQ(jinja::js_number(0.000001), "0.000001");
  EXPECT_EQ(jinja::js_number(-2.5e-10), "-2.5e-10");
  EXPECT_EQ(jinja::js_number(NAN), "NaN");
  EXPECT_EQ(jinja::js_number(-INFINITY), "-Infinity");
  const Limits limits;
  // An integral float keeps ".0" when printed, an integer does not; -0.0 is "-0.0".
  EXPECT_EQ(jinja::display(Value::floating(2), limits), "2.0");
  EXPECT_EQ(jinja::display(Value::floating(-0.0), limits), "-0.0");
  EXPECT_EQ(jinja::display(Value::floating(1e21), limits), "1e+21");
  EXPECT_EQ(jinja::display(Value::integer(2), limits), "2");
  // Concatenation uses the JavaScript number: 2.0 becomes "2".
  EXPECT_EQ(jinja::js_string(Value::floating(2), limits), "2");
}

TEST(JinjaValues, PrintingContainersAndSpecials) {
  Heap heap{Limits{}};
  const Value list = heap.array({Value::integer(1), Value(), Value::none(), heap.str("a")});
  EXPECT_EQ(jinja::display(list, heap.limits()), "[1, undefined, null, \"a\"]");
  EXPECT_EQ(jinja::js_string(list, heap.limits()), "1,undefined,null,a");
  EXPECT_EQ(jinja::display(Value::boolean(true), heap.limits()), "true");
  EXPECT_EQ(jinja::js_string(heap.object({}), heap.limits()), "[object Map]");
}

TEST(JinjaValues, LooseAndStrictEquality) {
  Heap heap{Limits{}};
  const Limits& l = heap.limits();
  EXPECT_TRUE(jinja::loose_equal(Value::integer(1), heap.str("1"), l));
  EXPECT_TRUE(jinja::loose_equal(Value::integer(0), heap.str(" \n"), l));
  EXPECT_TRUE(jinja::loose_equal(Value::integer(16), heap.str("0x10"), l));
  EXPECT_FALSE(jinja::loose_equal(Value::integer(1), heap.str("1a"), l));
  EXPECT_TRUE(jinja::loose_equal(Value::boolean(true), heap.str("1"), l));
  EXPECT_TRUE(jinja::loose_equal(Value::none(), Value(), l));
  EXPECT_FALSE(jinja::loose_equal(Value::none(), Value::integer(0), l));
  EXPECT_FALSE(jinja::loose_equal(Value::floating(NAN), Value::floating(NAN), l));
  const Value a = heap.array({Value::integer(1), Value::integer(2)});
  EXPECT_TRUE(jinja::loose_equal(a, a, l));
  EXPECT_FALSE(jinja::loose_equal(a, heap.array({Value::integer(1), Value::integer(2)}), l));
  EXPECT_TRUE(jinja::loose_equal(a, heap.str("1,2"), l));
  EXPECT_FALSE(jinja::strict_equal(Value::integer(1), heap.str("1")));
  EXPECT_TRUE(jinja::strict_equal(Value::integer(1), Value::floating(1)));
  EXPECT_FALSE(jinja::strict_equal(Value::boolean(true), Value::integer(1)));
}

TEST(JinjaJson, InputKeepsJavaScriptsKeyOrderAndNumberKinds) {
  Heap heap{Limits{}};
  const Value v = jinja::from_json(
      ordered_json::parse(R"({"b": 1, "10": 2, "a": 1.0, "2": 2.5, "01": 0})"), heap);
  ASSERT_TRUE(v.is(Kind::Object));
  // Array-index keys first, ascending; then the rest in insertion order ("01" is not an index).
  std::vector<std::string> keys;
  for (const auto& [k, value] : v.object().entries()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"2", "10", "b", "a", "01"}));
  EXPECT_TRUE(v.object().find("a")->is(Kind::Int));  // JSON.parse makes 1.0 an integer
  EXPECT_TRUE(v.object().find("2")->is(Kind::Float));
}

TEST(JinjaJson, OutputStyles) {
  Heap heap{Limits{}};
  const Value v = jinja::from_json(ordered_json::parse(R"({"k": [1, {"x": "é"}], "e": []})"), heap);
  jinja::JsonStyle style;
  EXPECT_EQ(jinja::to_json(v, style, heap.limits()), R"({"k": [1, {"x": "é"}], "e": []})");
  style.indent = 1;
  EXPECT_EQ(jinja::to_json(v, style, heap.limits()),
            "{\n \"k\": [\n  1,\n  {\n   \"x\": \"é\"\n  }\n ],\n \"e\": []\n}");
  style = {};
  style.ensure_ascii = true;
  EXPECT_EQ(jinja::to_json(heap.str("é\x7f😀"), style, heap.limits()),
            R"("\u00e9\u007f\ud83d\ude00")");
}

TEST(JinjaText, JavaScriptWhiteSpaceAndLengths) {
  EXPECT_EQ(jinja::trim("\u00a0\u2028\ufeff x \u3000\t"), "x");
  EXPECT_EQ(jinja::trim_end("x\u200b"), "x\u200b");  // a zero-width space is not white space
  EXPECT_EQ(jinja::utf16_length("a\u00e9\u4e16😀"), 5u);
  std::string ch;
  ASSERT_TRUE(jinja::utf16_at("a😀b", 3, &ch));
  EXPECT_EQ(ch, "b");
  ASSERT_TRUE(jinja::utf16_at("a😀b", 1, &ch));
  EXPECT_EQ(ch, "\xEF\xBF\xBD");  // half of a surrogate pair
  EXPECT_FALSE(jinja::utf16_at("ab", 2, &ch));
  EXPECT_TRUE(jinja::valid_utf8("ok é 😀"));
  EXPECT_FALSE(jinja::valid_utf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(jinja::valid_utf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(jinja::valid_utf8("\xE2\x82"));          // truncated
}

TEST(JinjaText, CaseMapping) {
  EXPECT_EQ(jinja::to_upper("abc àéîõü ÿ ā αβγ ς абв ѐ ｚ"), "ABC ÀÉÎÕÜ Ÿ Ā ΑΒΓ Σ АБВ Ѐ Ｚ");
  EXPECT_EQ(jinja::to_lower("ABC ÀÉÎÕÜ Ÿ Ā ΑΒΓ АБВ Ѐ Ｚ"), "abc àéîõü ÿ ā αβγ абв ѐ ｚ");
  EXPECT_EQ(jinja::title_case("hello wORLD-x_y 2nd é-a"), "Hello WORLD-X_y 2nd é-A");
}

}  // namespace
}  // namespace eagle2
