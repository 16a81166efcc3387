// /metrics in Prometheus' text format: every series the issue names, with HELP and TYPE, and
// histograms cumulative with +Inf, _sum and _count.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "server/metrics.h"

namespace eagle2::server {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

// The exposition read back as Prometheus would: every sample line `name{labels} value` under a
// TYPE for its family; histograms' buckets cumulative per label set, +Inf equal to _count.
// Returns "name{labels}" -> value; a malformed line fails the test.
std::map<std::string, double> parse_exposition(const std::string& text) {
  static const std::regex sample(R"(([a-z_0-9]+)(\{([^}]*)\})? ([-+0-9.eE]+|\+Inf|NaN))");
  std::map<std::string, std::string> types;
  std::map<std::string, double> values;
  std::map<std::string, double> last_bucket;  // family + labels without le -> last cumulative
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("# HELP ", 0) == 0) continue;
    if (l.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(l.substr(7));
      std::string name, type;
      t >> name >> type;
      types[name] = type;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(l, m, sample)) {
      ADD_FAILURE() << "malformed sample line: " << l;
      continue;
    }
    const std::string name = m[1], labels = m[3];
    const double v = std::stod(m[4]);
    values[name + (m[2].matched ? "{" + labels + "}" : "")] = v;
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (!types.count(family) && family.size() > std::string(suffix).size() &&
          family.ends_with(suffix))
        family.resize(family.size() - std::string(suffix).size());
    EXPECT_TRUE(types.count(family)) << "no TYPE for " << l;
    if (name.ends_with("_bucket")) {
      const std::string key =
          name + "|" + std::regex_replace(labels, std::regex(",?le=\"[^\"]*\""), "");
      if (last_bucket.count(key)) {
        EXPECT_GE(v, last_bucket[key]) << "not cumulative: " << l;
      }
      last_bucket[key] = v;
    }
  }
  for (const auto& [key, v] : values) {
    const size_t inf = key.find("le=\"+Inf\"");
    if (inf == std::string::npos) continue;
    // x_bucket{a="b",le="+Inf"} -> x_count{a="b"}; x_bucket{le="+Inf"} -> x_count
    const std::string base = key.substr(0, key.find("_bucket{"));
    std::string labels = key.substr(base.size() + 8, inf - base.size() - 8);
    if (!labels.empty() && labels.back() == ',') labels.pop_back();
    const std::string count = base + "_count" + (labels.empty() ? "" : "{" + labels + "}");
    EXPECT_TRUE(values.count(count) && values.at(count) == v) << key << " vs " << count;
  }
  return values;
}

TEST(ServerMetrics, HistogramRendersCumulativeBuckets) {
  Histogram h({1, 2, 4});
  for (const double v : {0.0, 1.0, 2.0, 3.0, 9.0}) h.observe(v);
  std::string out;
  h.render("x", out);
  EXPECT_EQ(out,
            "x_bucket{le=\"1\"} 2\n"
            "x_bucket{le=\"2\"} 3\n"
            "x_bucket{le=\"4\"} 4\n"
            "x_bucket{le=\"+Inf\"} 5\n"
            "x_sum 15\n"
            "x_count 5\n");
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.sum(), 15.0);
}

TEST(ServerMetrics, EverySeriesHasHelpAndType) {
  const std::string text = Metrics().render();
  const std::pair<const char*, const char*> series[] = {
      {"eagle2_requests_total", "counter"},
      {"eagle2_tokens_generated_total", "counter"},
      {"eagle2_queue_depth", "gauge"},
      {"eagle2_batch_sequences", "histogram"},
      {"eagle2_batch_rows", "histogram"},
      {"eagle2_accepted_length", "histogram"},
      {"eagle2_tau", "gauge"},
      {"eagle2_draft_seconds_total", "counter"},
      {"eagle2_verify_seconds_total", "counter"},
      {"eagle2_kv_blocks_used", "gauge"},
      {"eagle2_kv_blocks_total", "gauge"},
      {"eagle2_kv_blocks_reserved", "gauge"},
      {"eagle2_kv_drafter_bytes_reserved", "gauge"},
      {"eagle2_drafted_node_depth", "histogram"},
      {"eagle2_accepted_node_depth", "histogram"},
  };
  for (const auto& [name, type] : series) {
    EXPECT_NE(text.find(std::string("# HELP ") + name + " "), std::string::npos) << name;
    EXPECT_TRUE(has_line(text, std::string("# TYPE ") + name + " " + type)) << name;
  }
  // The outcomes are there from the start, at 0.
  EXPECT_TRUE(has_line(text, "eagle2_requests_total{status=\"ok\"} 0"));
  EXPECT_TRUE(has_line(text, "eagle2_requests_total{status=\"cancelled\"} 0"));
  EXPECT_TRUE(has_line(text, "eagle2_requests_total{status=\"error\"} 0"));
  EXPECT_TRUE(has_line(text, "eagle2_tau 0"));
  // The buckets the issue asks for.
  EXPECT_TRUE(has_line(text, "eagle2_batch_sequences_bucket{le=\"64\"} 0"));
  EXPECT_TRUE(has_line(text, "eagle2_batch_rows_bucket{le=\"1024\"} 0"));
  EXPECT_TRUE(has_line(text, "eagle2_accepted_length_bucket{le=\"0\"} 0"));
  EXPECT_TRUE(has_line(text, "eagle2_accepted_length_bucket{le=\"12\"} 0"));
  EXPECT_EQ(text.back(), '\n');
  parse_exposition(text);
}

TEST(ServerMetrics, RecordsShowUp) {
  Metrics m;
  m.request_done("ok");
  m.request_done("ok");
  m.request_done("503");
  m.tokens_generated(40);
  m.queue_depth(3);
  m.kv_blocks(10, 64);
  api::StepReport a;
  a.sequences = 2;
  a.rows = 12;
  a.accepted = {3, 0};
  a.committed = 5;  // 3 + 1 and 0 + 1
  a.draft_seconds = 0.25;
  a.forward_seconds = 0.5;
  m.step(a);
  m.kv_blocks(12, 64);
  api::StepReport b;
  b.sequences = 1;
  b.rows = 1;
  b.accepted = {0};
  b.committed = 1;
  m.step(b);
  m.kv_blocks(11, 64);
  const std::string text = m.render();
  EXPECT_TRUE(has_line(text, "eagle2_requests_total{status=\"ok\"} 2"));
  EXPECT_TRUE(has_line(text, "eagle2_requests_total{status=\"503\"} 1"));
  EXPECT_TRUE(has_line(text, "eagle2_tokens_generated_total 40"));
  EXPECT_TRUE(has_line(text, "eagle2_queue_depth 3"));
  EXPECT_TRUE(has_line(text, "eagle2_kv_blocks_used 11"));  // the last step's
  EXPECT_TRUE(has_line(text, "eagle2_kv_blocks_total 64"));
  EXPECT_TRUE(has_line(text, "eagle2_batch_sequences_bucket{le=\"1\"} 1"));
  EXPECT_TRUE(has_line(text, "eagle2_batch_sequences_bucket{le=\"2\"} 2"));
  EXPECT_TRUE(has_line(text, "eagle2_batch_rows_bucket{le=\"8\"} 1"));
  EXPECT_TRUE(has_line(text, "eagle2_batch_rows_bucket{le=\"16\"} 2"));
  EXPECT_TRUE(has_line(text, "eagle2_batch_rows_sum 13"));
  EXPECT_TRUE(has_line(text, "eagle2_accepted_length_bucket{le=\"0\"} 2"));
  EXPECT_TRUE(has_line(text, "eagle2_accepted_length_bucket{le=\"3\"} 3"));
  EXPECT_TRUE(has_line(text, "eagle2_accepted_length_count 3"));
  EXPECT_TRUE(has_line(text, "eagle2_tau 2"));  // 6 tokens committed over 3 verifications
  EXPECT_TRUE(has_line(text, "eagle2_draft_seconds_total 0.25"));
  EXPECT_TRUE(has_line(text, "eagle2_verify_seconds_total 0.5"));
}

// Acceptance per depth and per source: the depth of every drafted and every accepted node, as
// histograms labelled by source; a node deeper than 16 counts at 16.
TEST(ServerMetrics, DepthHistogramsPerSource) {
  Metrics m;
  api::Stats st;
  st.drafted_by_depth[0][0] = 5;  // all: five nodes at depth 1, three at 2, two deeper than 16
  st.drafted_by_depth[0][1] = 3;
  st.drafted_by_depth[0][15] = 2;
  st.accepted_by_depth[0][0] = 2;
  st.accepted_by_depth[0][1] = 1;
  st.drafted_by_depth[2][0] = 4;  // suffix
  st.accepted_by_depth[2][0] = 2;
  st.head_drafted = 4;
  st.suffix_drafted = 4;
  m.draft_sources(st);
  m.draft_sources(st);  // a second request adds to the first
  const std::map<std::string, double> v = parse_exposition(m.render());
  auto at = [&](const std::string& key) {
    const auto it = v.find(key);
    EXPECT_NE(it, v.end()) << key;
    return it == v.end() ? -1.0 : it->second;
  };
  EXPECT_EQ(at("eagle2_drafted_node_depth_bucket{source=\"all\",le=\"1\"}"), 10);
  EXPECT_EQ(at("eagle2_drafted_node_depth_bucket{source=\"all\",le=\"2\"}"), 16);
  EXPECT_EQ(at("eagle2_drafted_node_depth_bucket{source=\"all\",le=\"15\"}"), 16);
  EXPECT_EQ(at("eagle2_drafted_node_depth_bucket{source=\"all\",le=\"16\"}"), 20);
  EXPECT_EQ(at("eagle2_drafted_node_depth_count{source=\"all\"}"), 20);
  EXPECT_EQ(at("eagle2_drafted_node_depth_sum{source=\"all\"}"), 2 * (5 + 6 + 32));
  EXPECT_EQ(at("eagle2_accepted_node_depth_bucket{source=\"all\",le=\"1\"}"), 4);
  EXPECT_EQ(at("eagle2_accepted_node_depth_count{source=\"all\"}"), 6);
  EXPECT_EQ(at("eagle2_drafted_node_depth_count{source=\"suffix\"}"), 8);
  EXPECT_EQ(at("eagle2_accepted_node_depth_bucket{source=\"suffix\",le=\"1\"}"), 4);
  EXPECT_EQ(at("eagle2_drafted_node_depth_count{source=\"head\"}"), 0);
  EXPECT_EQ(at("eagle2_drafted_tokens_by_source_total{source=\"suffix\"}"), 8);
}

TEST(ServerMetrics, SuffixIndexGauges) {
  Metrics m;
  EXPECT_TRUE(has_line(m.render(), "eagle2_suffix_index_bytes 0"));
  api::Engine::SuffixIndexUsage u;
  u.bytes = 1000000;
  u.documents = 7;
  u.evictions = 93;
  m.suffix_index(u);
  const std::map<std::string, double> v = parse_exposition(m.render());
  EXPECT_EQ(v.at("eagle2_suffix_index_bytes"), 1000000);
  EXPECT_EQ(v.at("eagle2_suffix_index_documents"), 7);
  EXPECT_EQ(v.at("eagle2_suffix_index_evictions_total"), 93);
}

TEST(ServerMetrics, LabelValuesAreEscaped) {
  Metrics m;
  m.request_done("a\"b\\c\nd");
  EXPECT_TRUE(has_line(m.render(), "eagle2_requests_total{status=\"a\\\"b\\\\c\\nd\"} 1"));
}

}  // namespace
}  // namespace eagle2::server
