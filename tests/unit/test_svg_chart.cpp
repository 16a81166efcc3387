// The SVG chart writer and the benchmark's chart set: well-formed, escaped, deterministic output
// that carries every label and value a reader needs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/bench_charts.h"
#include "eagle2/svg_chart.h"

namespace eagle2 {
namespace {

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// Tags balance: every "<name" that is not self-closing has a matching "</name>", in order. A
// stack, not just counts, so interleaved tags fail too.
::testing::AssertionResult well_formed(const std::string& svg) {
  if (svg.rfind("<svg", 0) != 0) return ::testing::AssertionFailure() << "does not start with <svg";
  std::string trimmed = svg;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) trimmed.pop_back();
  if (trimmed.size() < 6 || trimmed.substr(trimmed.size() - 6) != "</svg>")
    return ::testing::AssertionFailure() << "does not end with </svg>";
  std::vector<std::string> stack;
  size_t i = 0;
  while ((i = svg.find('<', i)) != std::string::npos) {
    const size_t end = svg.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unterminated tag";
    const std::string tag = svg.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos)
      return ::testing::AssertionFailure() << "raw '<' inside a tag at " << i;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1))
        return ::testing::AssertionFailure() << "unbalanced </" << tag.substr(1) << ">";
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find(' ')));
    }
    i = end + 1;
  }
  // Text between tags must not carry a bare '&' (an escape starts with '&' and ends with ';').
  for (size_t a = svg.find('&'); a != std::string::npos; a = svg.find('&', a + 1)) {
    const size_t semi = svg.find(';', a);
    if (semi == std::string::npos || semi - a > 6)
      return ::testing::AssertionFailure() << "bare '&' at " << a;
  }
  if (!stack.empty()) return ::testing::AssertionFailure() << "unclosed <" << stack.back() << ">";
  return ::testing::AssertionSuccess();
}

TEST(SvgChart, FormatAndEscape) {
  EXPECT_EQ(format_number(2.345, 2), "2.35");  // snprintf rounding of the nearest double
  EXPECT_EQ(format_number(-0.001, 2), "0.00");
  EXPECT_EQ(format_number(3, 0), "3");
  EXPECT_EQ(xml_escape("a<b & \"c\" > 'd'"), "a&lt;b &amp; &quot;c&quot; &gt; &apos;d&apos;");
  const auto t = nice_ticks(0, 3.7);
  ASSERT_GE(t.size(), 2u);
  EXPECT_EQ(t.front(), 0);
  EXPECT_GE(t.back(), 3.7);
  const auto degenerate = nice_ticks(5, 5);
  EXPECT_GE(degenerate.size(), 2u);
}

TEST(SvgChart, BarChart) {
  BarChart c;
  c.title = "Speed <fast> & loose";
  c.y_label = "speedup";
  c.categories = {"plain", "chain:3", "dyn<&>"};
  c.series = {{"T=0", {1.0, 1.8, 2.456}}, {"T=1", {1.0, 1.5, 2.0}}};
  c.width = 640;
  c.height = 360;
  const std::string svg = render_bar_chart(c);
  EXPECT_TRUE(well_formed(svg)) << svg;
  EXPECT_TRUE(contains(svg, "width=\"640\" height=\"360\""));
  EXPECT_TRUE(contains(svg, "Speed &lt;fast&gt; &amp; loose"));
  EXPECT_FALSE(contains(svg, "dyn<&>"));
  for (const char* label : {"plain", "chain:3", "dyn&lt;&amp;&gt;", "T=0", "T=1"})
    EXPECT_TRUE(contains(svg, label)) << label;
  for (const char* value : {">1.00<", ">1.80<", ">2.46<", ">1.50<", ">2.00<"})
    EXPECT_TRUE(contains(svg, value)) << value;
  EXPECT_EQ(svg, render_bar_chart(c));  // deterministic
}

TEST(SvgChart, LineChart) {
  LineChart c;
  c.title = "tau vs budget";
  c.x_label = "tree size";
  c.y_label = "tau";
  c.series = {{"dynamic", {{32, 3.25}, {16, 2.5}}}, {"static", {{26, 2.75}}}, {"chain", {}}};
  const std::string svg = render_line_chart(c);
  EXPECT_TRUE(well_formed(svg)) << svg;
  for (const char* label : {"tau vs budget", "tree size", "dynamic", "static", "chain"})
    EXPECT_TRUE(contains(svg, label)) << label;
  for (const char* value : {">3.25<", ">2.50<", ">2.75<"})
    EXPECT_TRUE(contains(svg, value)) << value;
  EXPECT_TRUE(contains(svg, "<polyline"));
  EXPECT_EQ(svg, render_line_chart(c));
}

TEST(SvgChart, EmptyChartsAreStillValid) {
  EXPECT_TRUE(well_formed(render_bar_chart({})));
  EXPECT_TRUE(well_formed(render_line_chart({})));
  EXPECT_TRUE(contains(render_bar_chart({}), "no data"));
}

Summary row(const std::string& set, float temp, const std::string& drafter, double speedup,
            double tau, int64_t cycles) {
  Summary s;
  s.prompt_set = set;
  s.temperature = temp;
  s.drafter = drafter;
  s.speedup = speedup;
  s.tau = tau;
  s.cycles = cycles;
  return s;
}

std::vector<std::string> names_of(const std::vector<std::pair<std::string, std::string>>& charts) {
  std::vector<std::string> out;
  for (const auto& c : charts) out.push_back(c.first);
  return out;
}

TEST(BenchCharts, FileNamesAndBudgetCharts) {
  const std::vector<Summary> rows = {
      row("mt bench", 0, "plain", 1.0, 0, 0),
      row("mt bench", 0, "chain:3", 1.6, 2.1, 10),
      row("mt bench", 0, "static", 1.9, 2.6, 10),
      row("mt bench", 0, "dynamic:16:3:4", 2.0, 2.8, 10),
      row("mt bench", 0, "dynamic:32:4:8", 2.2, 3.1, 10),
      row("mt bench", 1, "plain", 1.0, 0, 0),
      row("mt bench", 1, "chain:3", 1.4, 1.9, 10),
      row("gsm8k", 0, "plain", 1.0, 0, 0),
      row("gsm8k", 0, "lookup", 1.3, 1.7, 10),
      row("mt bench", 0, "dynamic:auto", 2.3, 2.9, 10),
      row("mt bench", 0, "dynamic:16:3:4:novalue", 1.7, 2.4, 10),
      row("mt bench", 0, "dynamic:16:3:4:norerank", 1.8, 2.5, 10),
  };
  const auto charts = bench_charts(rows);
  const std::vector<std::string> expected = {
      "mt_bench_t0_speedup.svg",        "mt_bench_t0_tau.svg",     "mt_bench_t0_budget_tau.svg",
      "mt_bench_t0_budget_speedup.svg", "mt_bench_t1_speedup.svg", "mt_bench_t1_tau.svg",
      "gsm8k_t0_speedup.svg",           "gsm8k_t0_tau.svg"};
  EXPECT_EQ(names_of(charts), expected);
  for (const auto& [name, svg] : charts) EXPECT_TRUE(well_formed(svg)) << name;

  const std::string& speed = charts[0].second;
  for (const char* s : {"plain", "chain:3", "static", "dynamic:16:3:4", "dynamic:32:4:8", ">2.20<"})
    EXPECT_TRUE(contains(speed, s)) << s;
  // Plain decoding has no cycles, so it has no tau bar.
  EXPECT_FALSE(contains(charts[1].second, ">plain<"));
  EXPECT_TRUE(contains(charts[1].second, ">3.10<"));

  // Budget axes: dynamic at T, static (mc_sim_7b_63) at 26, chain:3 at 5.
  const std::string& bt = charts[2].second;
  EXPECT_TRUE(contains(bt, "dynamic at 16: 2.80"));
  EXPECT_TRUE(contains(bt, "dynamic at 32: 3.10"));
  EXPECT_TRUE(contains(bt, "static at 26: 2.60"));
  EXPECT_TRUE(contains(bt, "chain at 5: 2.10"));
  // The ablation has bars, not points on EAGLE-2's budget line.
  EXPECT_TRUE(contains(speed, "dynamic:16:3:4:novalue"));
  EXPECT_TRUE(contains(charts[1].second, "dynamic:16:3:4:norerank"));
  EXPECT_FALSE(contains(bt, "dynamic at 16: 2.40"));
  EXPECT_FALSE(contains(bt, "dynamic at 16: 2.50"));
  EXPECT_TRUE(contains(charts[3].second, "dynamic at 32: 2.20"));
  // The auto budget: a level line from the smallest to the largest fixed size.
  EXPECT_TRUE(contains(bt, "dynamic:auto at 5: 2.90"));
  EXPECT_TRUE(contains(bt, "dynamic:auto at 32: 2.90"));
  EXPECT_TRUE(contains(charts[3].second, "dynamic:auto at 26: 2.30") ||
              contains(charts[3].second, "dynamic:auto at 32: 2.30"));
}

TEST(BenchCharts, NoRowsNoCharts) {
  EXPECT_TRUE(bench_charts({}).empty());
}

TEST(BenchCharts, CalibrationChartForTreeDraftersWithNodes) {
  Summary dyn = row("code", 0, "dynamic", 2.0, 3.0, 10);
  dyn.calibration.nodes[2] = 4;  // estimates 0.2 .. 0.3
  dyn.calibration.estimate_sum[2] = 1.0;
  dyn.calibration.accepted[2] = 1;
  dyn.calibration.nodes[9] = 10;
  dyn.calibration.estimate_sum[9] = 9.5;
  dyn.calibration.accepted[9] = 8;
  Summary look = row("code", 0, "lookup", 1.2, 1.5, 10);
  look.calibration.nodes[9] = 5;  // lookup's values are not estimates: left out
  const auto charts = bench_charts(
      {row("code", 0, "plain", 1, 0, 0), dyn, look, row("code", 0, "chain:3", 1, 2, 5)});
  const std::vector<std::string> expected = {"code_t0_speedup.svg", "code_t0_tau.svg",
                                             "code_t0_calibration.svg", "code_t0_budget_tau.svg",
                                             "code_t0_budget_speedup.svg"};
  ASSERT_EQ(names_of(charts), expected);
  const std::string& cal = charts[2].second;
  EXPECT_TRUE(well_formed(cal));
  EXPECT_TRUE(contains(cal, "perfect calibration at 1.00: 1.00"));
  EXPECT_TRUE(contains(cal, "dynamic at 0.25: 0.25"));  // mean estimate 1/4, 1 of 4 accepted
  EXPECT_TRUE(contains(cal, "dynamic at 0.95: 0.80"));
  EXPECT_FALSE(contains(cal, "lookup"));
  EXPECT_FALSE(contains(cal, "chain:3"));  // no nodes recorded: no series
  // Without calibration data there is no calibration chart.
  EXPECT_EQ(bench_charts({row("code", 0, "dynamic", 2.0, 3.0, 10)}).size(), 4u);
}

}  // namespace
}  // namespace eagle2
