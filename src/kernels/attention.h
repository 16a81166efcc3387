// Attention of one query head over the keys it may see, read from the KV cache in slot order.
// Slots are logical (a sequence's 0, 1, 2, ...); a block table maps them to storage rows, so a
// paged cache is read in place: slot s is row table[s >> shift] * 2^shift + s % 2^shift of the
// layer's storage (no table: row s).
#pragma once

#include <cstdint>

#include "core/thread_pool.h"
#include "kernels/cpu.h"

namespace eagle2 {

struct AttentionKeys {
  const float* k =
      nullptr;  // storage row r's key for this head at k + r * stride (head_dim floats)
  const float* v = nullptr;        // likewise for values
  int64_t stride = 0;              // floats between consecutive rows
  const int32_t* table = nullptr;  // block table (nullptr: slot s is row s)
  int shift = 0;                   // log2 of the block size
  int64_t n_context = 0;           // slots [0, n_context) are visible (the committed context)
  const int32_t* extra = nullptr;  // then these slots, in increasing order (batch rows it may see)
  int64_t n_extra = 0;
};

// out[head_dim] = sum_j softmax(scale * q.k_j)_j * v_j over the visible slots, in order.
// Batch invariance: the visible slots are treated as ONE sequence (context then extras); the result
// depends only on that sequence of (k, v) and never on where the context/extra split falls, so a
// token decoded alone and the same token inside a prefill or tree batch give identical bits.
// scratch needs n_context + n_extra floats. With no visible slot the output is zero. `path` must be
// one the CPU supports (the caller checked it, e.g. it came from active_kernel_path()).
void attention_head(KernelPath path, const float* q, const AttentionKeys& keys, int64_t head_dim,
                    float scale, float* scratch, float* out);

// Every query head of a batch of rows of one or more sequences over one layer's KV storage
// (grouped-query attention: head h reads KV head h / (n_heads / n_kv_heads)). Row i belongs to
// sequence s = row_sequence[i] and sees that sequence's committed slots 0..n_context-1 and then
// visible[visible_begin[i] .. visible_begin[i + 1]), all through the sequence's block table. Each
// output equals attention_head's for that row and head, bit for bit; the SIMD paths read each
// block of context keys and values once for all the rows (of one sequence) and heads that share
// a KV head, instead of once per row and head (a verify batch of 8 rows with 2 heads per KV head
// reads the context 16 times less).
struct AttentionSequence {
  const int32_t* table = nullptr;  // its block table (nullptr: slot s is row s)
  int64_t n_context = 0;           // its committed slots
};
struct AttentionBatch {
  const float* q = nullptr;  // [n_rows, n_heads * head_dim]
  const float* k = nullptr;  // storage row r, KV head g: k + r * stride + g * head_dim
  const float* v = nullptr;
  int64_t stride = 0;  // n_kv_heads * head_dim
  int shift = 0;       // log2 of the block size of every sequence's table
  const AttentionSequence* sequences = nullptr;
  const int32_t* row_sequence = nullptr;  // nullptr: every row is in sequences[0]
  const int32_t* visible = nullptr;
  const int64_t* visible_begin = nullptr;  // n_rows + 1 offsets
  int64_t n_rows = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  float scale = 1.0f;
  float* out = nullptr;  // [n_rows, n_heads * head_dim]
};
void attention_batch(KernelPath path, const AttentionBatch& batch, ThreadPool& pool);

}  // namespace eagle2
