#include "bench/bench_charts.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/error.h"
#include "eagle2/svg_chart.h"

namespace eagle2 {

namespace {

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string temp_text(float t) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(t));
  return buf;
}

struct BudgetPoint {
  std::string family;
  double size;
};

// The drafter a summary's label names; nullopt for labels that do not parse (hand-made or foreign
// summaries).
std::optional<DrafterSpec> spec_of(const std::string& label) {
  try {
    return parse_drafter_spec(label);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The tree size a drafter verifies per cycle, root included; nullopt for drafters without a tree
// (plain, none, lookup), for auto budgets (no one size), for the EAGLE-2 ablation (its points
// would join EAGLE-2's line; its bars compare it) and for labels that do not parse.
std::optional<BudgetPoint> budget_point(const std::string& label) {
  const auto spec = spec_of(label);
  if (!spec) return std::nullopt;
  if (spec->kind == "dynamic" && spec->auto_budget) return std::nullopt;
  if (spec->dynamic.ranking != DynamicTreeParams::Ranking::Value || !spec->dynamic.rerank)
    return std::nullopt;
  if (spec->kind == "dynamic")
    return BudgetPoint{spec->calibrate ? "dynamic, calibrated" : "dynamic",
                       double(spec->dynamic.total_tokens)};
  if (spec->kind == "static") return BudgetPoint{"static", double(spec->choices.size() + 1)};
  if (spec->kind == "chain") return BudgetPoint{"chain", double(spec->chain_depth + 2)};
  return std::nullopt;
}

// Drafters whose nodes carry draft-probability values (EAGLE trees, fixed or auto budget).
bool is_tree_drafter(const std::string& label) {
  const auto spec = spec_of(label);
  return spec && (spec->kind == "dynamic" || spec->kind == "static" || spec->kind == "chain");
}

bool is_auto_drafter(const std::string& label) {
  const auto spec = spec_of(label);
  return spec && spec->auto_budget;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> bench_charts(const std::vector<Summary>& rows) {
  // Groups in order of first appearance, so the files follow the table's order.
  std::vector<std::pair<std::string, float>> groups;
  for (const Summary& s : rows) {
    const std::pair<std::string, float> key{s.prompt_set, s.temperature};
    bool seen = false;
    for (const auto& g : groups) seen = seen || g == key;
    if (!seen) groups.push_back(key);
  }

  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [set, temp] : groups) {
    const std::string where = set + ", temperature " + temp_text(temp);
    const std::string stem = safe_name(set) + "_t" + safe_name(temp_text(temp)) + "_";
    BarChart speed{"Speedup over plain decoding (" + where + ")", "speedup (x)", {}, {{"", {}}}};
    BarChart tau{"Tokens per cycle, tau (" + where + ")", "tau", {}, {{"", {}}}};
    const char* families[] = {"dynamic", "dynamic, calibrated", "static", "chain"};
    constexpr size_t kFamilies = 4;
    std::vector<LineSeries> budget_tau(kFamilies), budget_speed(kFamilies);
    bool has_dynamic = false;
    for (const Summary& s : rows) {
      if (s.prompt_set != set || s.temperature != temp) continue;
      speed.categories.push_back(s.drafter);
      speed.series[0].values.push_back(s.speedup);
      // Plain decoding runs no speculative cycles; a zero bar would read as a failed drafter.
      if (s.cycles > 0) {
        tau.categories.push_back(s.drafter);
        tau.series[0].values.push_back(s.tau);
      }
      const auto bp = budget_point(s.drafter);
      if (!bp) continue;
      for (size_t f = 0; f < kFamilies; ++f)
        if (bp->family == families[f]) {
          budget_tau[f].points.emplace_back(bp->size, s.tau);
          budget_speed[f].points.emplace_back(bp->size, s.speedup);
        }
      has_dynamic = has_dynamic || bp->family.starts_with("dynamic");
    }
    out.emplace_back(stem + "speedup.svg", render_bar_chart(speed));
    out.emplace_back(stem + "tau.svg", render_bar_chart(tau));
    // Calibration of the tree drafters' acceptance estimates (lookup's are not estimates).
    LineChart cal{"Acceptance against the draft's estimate (" + where + ")",
                  "estimated acceptance of the node's path, exp(value) (bin mean)",
                  "observed acceptance rate",
                  {}};
    cal.x_decimals = 2;
    cal.series.push_back({"perfect calibration", {{0.0, 0.0}, {1.0, 1.0}}});
    for (const Summary& s : rows) {
      if (s.prompt_set != set || s.temperature != temp || !is_tree_drafter(s.drafter)) continue;
      LineSeries line{s.drafter, {}};
      for (int b = 0; b < Calibration::kBins; ++b) {
        const double n = static_cast<double>(s.calibration.nodes[b]);
        if (n > 0)
          line.points.emplace_back(s.calibration.estimate_sum[b] / n,
                                   static_cast<double>(s.calibration.accepted[b]) / n);
      }
      if (!line.points.empty()) cal.series.push_back(line);
    }
    if (cal.series.size() > 1) out.emplace_back(stem + "calibration.svg", render_line_chart(cal));
    if (!has_dynamic) continue;
    LineChart lt{"tau against tree size (" + where + ")",
                 "tokens verified per cycle (root included)",
                 "tau",
                 {}};
    LineChart ls{"Speedup against tree size (" + where + ")",
                 "tokens verified per cycle (root included)",
                 "speedup (x)",
                 {}};
    double x_lo = 0, x_hi = 0;
    bool any_x = false;
    for (size_t f = 0; f < kFamilies; ++f) {
      if (budget_tau[f].points.empty()) continue;
      budget_tau[f].name = budget_speed[f].name = families[f];
      lt.series.push_back(budget_tau[f]);
      ls.series.push_back(budget_speed[f]);
      for (const auto& p : budget_tau[f].points) {
        x_lo = any_x ? std::min(x_lo, p.first) : p.first;
        x_hi = any_x ? std::max(x_hi, p.first) : p.first;
        any_x = true;
      }
    }
    // An auto budget has no one size: drawn as a level line across the fixed sizes, to read
    // against the best of them.
    for (const Summary& s : rows) {
      if (s.prompt_set != set || s.temperature != temp || !is_auto_drafter(s.drafter)) continue;
      lt.series.push_back({s.drafter, {{x_lo, s.tau}, {x_hi, s.tau}}});
      ls.series.push_back({s.drafter, {{x_lo, s.speedup}, {x_hi, s.speedup}}});
    }
    out.emplace_back(stem + "budget_tau.svg", render_line_chart(lt));
    out.emplace_back(stem + "budget_speedup.svg", render_line_chart(ls));
  }
  return out;
}

}  // namespace eagle2
