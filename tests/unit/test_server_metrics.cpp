// /metrics in Prometheus' text format: every series the issue names, with HELP and TYPE, and
// histograms cumulative with +Inf, _sum and _count.
#include <gtest/gtest.h>

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

TEST(ServerMetrics, LabelValuesAreEscaped) {
  Metrics m;
  m.request_done("a\"b\\c\nd");
  EXPECT_TRUE(has_line(m.render(), "eagle2_requests_total{status=\"a\\\"b\\\\c\\nd\"} 1"));
}

}  // namespace
}  // namespace eagle2::server
