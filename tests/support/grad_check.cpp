// The finite-difference checks of support/grad_check.h.
#include "support/grad_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace eagle2::test::grad_check {

Vec rnd(size_t n, std::mt19937& g, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  Vec v(n);
  for (auto& e : v) e = u(g);
  return v;
}

DVec to_d(const Vec& v) {
  return DVec(v.begin(), v.end());
}

double dot(const DVec& a, const Vec& r) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * r[i];
  return s;
}

DVec numeric_grad(DVec& x, const std::function<double()>& f, double h) {
  DVec g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = x[i];
    x[i] = s + h;
    const double lp = f();
    x[i] = s - h;
    const double lm = f();
    x[i] = s;
    g[i] = (lp - lm) / (2 * h);
  }
  return g;
}

void expect_grad(const Vec& analytic, const DVec& numeric, const char* what, double rtol) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  double scale = 0, err = 0;
  size_t worst = 0;
  for (size_t i = 0; i < numeric.size(); ++i) {
    scale = std::max(scale, std::fabs(numeric[i]));
    const double e = std::fabs(analytic[i] - numeric[i]);
    if (e > err) err = e, worst = i;
  }
  EXPECT_GT(scale, 1e-4) << what << ": gradient is (numerically) zero, the check is vacuous";
  EXPECT_LE(err, rtol * scale + 1e-7) << what << ": worst element " << worst << " analytic "
                                      << analytic[worst] << " numeric " << numeric[worst];
}

void expect_close(const Vec& got, const DVec& want, double rtol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double scale = 0, err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    err = std::max(err, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(err, rtol * scale + 1e-7) << what;
}

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void random_keys_values(std::vector<Vec>& k, std::vector<Vec>& v, int64_t s, size_t n,
                        std::mt19937& g) {
  for (int64_t u = 0; u <= s; ++u) {
    k.push_back(rnd(n, g, -1.5f, 1.5f));
    v.push_back(rnd(n, g));
  }
}

std::vector<const float*> ptrs(const std::vector<Vec>& v) {
  std::vector<const float*> p;
  for (const Vec& x : v) p.push_back(x.data());
  return p;
}

std::vector<float*> mut_ptrs(std::vector<Vec>& v) {
  std::vector<float*> p;
  for (Vec& x : v) p.push_back(x.data());
  return p;
}

}  // namespace eagle2::test::grad_check
