// Finite-difference gradient checking for the tests of src/train's backward passes: central
// differences of a double-precision loss (float32 differences would be too coarse for 1e-3
// checks) and the comparisons the checks share.
#pragma once

#include <functional>
#include <random>
#include <vector>

namespace eagle2::test::grad_check {

using Vec = std::vector<float>;
using DVec = std::vector<double>;

// n uniform values in [lo, hi).
Vec rnd(size_t n, std::mt19937& g, float lo = -1.0f, float hi = 1.0f);

DVec to_d(const Vec& v);

// sum(a * r): the loss L = sum(out * R) of a reference output, so dout = R.
double dot(const DVec& a, const Vec& r);

// dL/dx by central differences; f reads x (captured by reference).
DVec numeric_grad(DVec& x, const std::function<double()>& f, double h = 1e-6);

// Max error relative to the gradient's scale; also guards against a vacuous all-zero check.
void expect_grad(const Vec& analytic, const DVec& numeric, const char* what, double rtol = 1e-3);

// A float forward against its double reference, relative to the reference's scale.
void expect_close(const Vec& got, const DVec& want, double rtol, const char* what);

bool same_bits(const Vec& a, const Vec& b);

// Keys and values of unrolled steps 0..s, n values each, drawn in the order k0, v0, k1, v1, ...:
// keys in [-1.5, 1.5) (spread enough for peaked attention rows), values in [-1, 1).
void random_keys_values(std::vector<Vec>& k, std::vector<Vec>& v, int64_t s, size_t n,
                        std::mt19937& g);

// The data pointers of a list of tensors (e.g. one key tensor per unrolled step).
std::vector<const float*> ptrs(const std::vector<Vec>& v);
std::vector<float*> mut_ptrs(std::vector<Vec>& v);

}  // namespace eagle2::test::grad_check
