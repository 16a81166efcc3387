// The loss curve of a train-lm run: buckets of training losses, held-out points, the SVG, errors.
#include <gtest/gtest.h>

#include "support/errors.h"
#include "support/shared_data.h"
#include "train/loss_curve.h"

namespace eagle2::train {
namespace {

const char* kLog =
    "step\ttokens\tloss\tlr\theld_out_loss\n"
    "1\t100\t8.0\t1e-3\t\n"
    "2\t200\t6.0\t1e-3\t6.5\n"
    "3\t300\t5.0\t1e-3\t\n"
    "4\t400\t3.0\t1e-3\t\n"
    "5\t500\t2.0\t1e-3\t3.25\n";

TEST(LossCurve, BucketsTrainingLossesAndKeepsEveryEvaluation) {
  const LossCurve c = parse_loss_curve(kLog, 2, "log");
  ASSERT_EQ(c.train.size(), 3u);  // steps 1-2, 3-4, and the short bucket 5
  EXPECT_EQ(c.train[0].step, 2);
  EXPECT_DOUBLE_EQ(c.train[0].loss, 7.0);
  EXPECT_EQ(c.train[1].tokens, 400);
  EXPECT_DOUBLE_EQ(c.train[1].loss, 4.0);
  EXPECT_EQ(c.train[2].step, 5);
  EXPECT_DOUBLE_EQ(c.train[2].loss, 2.0);
  ASSERT_EQ(c.held_out.size(), 2u);
  EXPECT_EQ(c.held_out[0].step, 2);
  EXPECT_DOUBLE_EQ(c.held_out[1].loss, 3.25);
  EXPECT_EQ(parse_loss_curve(kLog, 1, "log").train.size(), 5u);
}

TEST(LossCurve, SvgHasBothSeriesWithoutValueLabels) {
  const std::string svg = render_loss_curve(parse_loss_curve(kLog, 1, "log"), "a run");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("a run"), std::string::npos);
  EXPECT_NE(svg.find("held out at 0.0005: 3.25"), std::string::npos) << svg;  // tooltips stay
  EXPECT_EQ(test::count_of(svg, "<polyline"), 2);
  EXPECT_EQ(svg.find("font-size=\"9\""), std::string::npos);  // no per-point labels
  EXPECT_EQ(svg, render_loss_curve(parse_loss_curve(kLog, 1, "log"), "a run"));
}

TEST(LossCurve, MalformedLogsAreErrorsWithTheLine) {
  EXPECT_NE(test::error_of([] {
              parse_loss_curve("hello\n", 1, "x.tsv");
            }).find("x.tsv: not a train-lm log"),
            std::string::npos);
  const std::string bad = std::string(kLog) + "six\t1\t2\t3\t\n";
  EXPECT_EQ(test::error_of([&] { parse_loss_curve(bad, 1, "x.tsv"); }),
            "x.tsv:7: column 'step': 'six' is not an integer");
  EXPECT_NE(test::error_of([] { parse_loss_curve(kLog, 0, "x.tsv"); }).find("bucket 0"),
            std::string::npos);
}

}  // namespace
}  // namespace eagle2::train
