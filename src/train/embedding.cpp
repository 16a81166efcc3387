#include "train/embedding.h"

#include <algorithm>

#include "core/error.h"

namespace eagle2::train {

namespace {

void check_ids(const char* what, const int32_t* ids, int64_t M, int64_t V) {
  for (int64_t m = 0; m < M; ++m)
    if (ids[m] < 0 || ids[m] >= V)
      fail(what, ": token id ", ids[m], " at row ", m, " is outside [0, ", V, ")");
}

}  // namespace

void embedding_forward(float* out, const int32_t* ids, int64_t M, const Matrix& table,
                       ThreadPool& pool) {
  check_ids("embedding_forward", ids, M, table.rows);
  const int64_t C = table.cols;
  constexpr int64_t kRows = 32;
  pool.parallel_for((M + kRows - 1) / kRows, [&](int64_t t) {
    const int64_t m1 = std::min(M, (t + 1) * kRows);
    for (int64_t m = t * kRows; m < m1; ++m)
      convert_to_f32(table.dtype, table.row(ids[m]), out + m * C, static_cast<size_t>(C));
  });
}

void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int64_t M, int64_t V,
                        int64_t C, ThreadPool& pool) {
  check_ids("embedding_backward", ids, M, V);
  constexpr int64_t kCols = 256;
  pool.parallel_for((C + kCols - 1) / kCols, [&](int64_t t) {
    const int64_t c0 = t * kCols, c1 = std::min(C, c0 + kCols);
    for (int64_t m = 0; m < M; ++m) {
      float* row = dtable + static_cast<int64_t>(ids[m]) * C;
      for (int64_t c = c0; c < c1; ++c) row[c] += dout[m * C + c];
    }
  });
}

}  // namespace eagle2::train
