// attention's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// Scaled dot-product attention of every (batch, head), forward:
//   S = scale Q K^T  [lq, lk];  S_ij = -inf where causal and j > i (token i sees keys 0..i)
//   P = softmax(S) over j;  out = P V  [lq, d];  lse_i = log sum_j exp(S_ij)
// q [batch, heads, lq, d], k and v [batch, heads, lk, d] are read through their own strides
// (batch, head, row, column), so the heads split out of a [B, T, 3, H, d] projection by a
// permute need no copy. out is contiguous [batch, heads, lq, d], lse contiguous [batch, heads,
// lq] (saved for backward, which rebuilds P_ij = exp(S_ij - lse_i) from it). The front end has
// checked lk >= 1 and, for causal, lq == lk.
//
// Scratch: `workspace_size` elements that the front end allocates as a temporary buffer, so
// the profile shows what a variant trades for memory: attention_scores_workspace() for a
// variant that keeps the whole score matrix of every head (tag naive, and learners' kernels),
// attention_tiled_workspace() for tiled variants (a few fixed tiles per thread).
template <class T>
struct AttentionArgs {
  const T* q;
  const T* k;
  const T* v;
  T* out;
  T* lse;
  T* workspace;
  int64_t workspace_size;
  int64_t batch, heads, lq, lk, d;
  int64_t q_stride[4], k_stride[4], v_stride[4];  // batch, head, row, column strides
  double scale;                                   // usually 1 / sqrt(d)
  bool causal;
};

// Its gradient: every input read as above, plus the forward's out and lse and the output
// gradient dout (both contiguous [batch, heads, lq, d]); dq, dk, dv are contiguous with q's,
// k's and v's shapes and are overwritten. With D_i = sum_c dout_ic out_ic:
//   P = exp(S - lse);  dV = P^T dout;  dP = dout V^T;  dS = P * (dP - D)
//   dQ = scale dS K;   dK = scale dS^T Q
template <class T>
struct AttentionBackwardArgs {
  const T* q;
  const T* k;
  const T* v;
  const T* out;
  const T* dout;
  const T* lse;
  T* dq;
  T* dk;
  T* dv;
  T* workspace;
  int64_t workspace_size;
  int64_t batch, heads, lq, lk, d;
  int64_t q_stride[4], k_stride[4], v_stride[4];
  double scale;
  bool causal;
};

// The tiles of the tiled attention kernels: kAttentionBlock query rows against kAttentionBlock
// key rows at a time. At 128 a float32 score tile is 64 KB and a thread's tiles about 260 KB at
// d = 64, inside a 1 MB L2 (128 measured 3-10 % faster than 64 here: fewer, larger products).
constexpr int64_t kAttentionBlock = 128;

// Elements of scratch for a variant that materialises every head's lq x lk scores (O(L^2)).
inline int64_t attention_scores_workspace(int64_t batch, int64_t heads, int64_t lq, int64_t lk) {
  return batch * heads * lq * lk;
}
// Per worker thread of a tiled variant: q, k, v tiles and the output accumulator (4 B d), the
// score tile and its gradient (2 B^2), the running max and sum (2 B), and one value per query
// row (backward's D_i): O(B^2 + B d + L), linear in the sequence length. A kernel runs on at most
// workspace_size / attention_tiled_workspace(lq, d, 1) threads.
inline int64_t attention_tiled_workspace(int64_t lq, int64_t d, int64_t workers) {
  const int64_t b = kAttentionBlock;
  return workers * (4 * b * d + 2 * b * b + 2 * b + lq);
}

}  // namespace prism::kernels
