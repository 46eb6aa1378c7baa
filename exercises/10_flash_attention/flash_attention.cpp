// Exercise 10: flash attention forward. The task is in README.md, next to this file.
//
// For every (batch b, head h), with S = scale Q K^T:
//   S_ij = scale q_i . k_j,  or -inf where a.causal and j > i (query i sees keys 0..i)
//   out_i = sum_j softmax_j(S_i.) v_j,        lse_i = log sum_j exp(S_ij)
// computed key block by key block with the online softmax, never holding the lq x lk matrix S.
// Per query row keep the running max m (start: -inf), the running sum l = sum exp(S_ij - m)
// (start: 0) and the unnormalised output acc = sum exp(S_ij - m) v_j (start: 0). For each block
// of keys with scores s_j:
//   m_new = max(m, max_j s_j);   alpha = exp(m - m_new)
//   l = alpha l + sum_j exp(s_j - m_new);   acc = alpha acc + sum_j exp(s_j - m_new) v_j
//   m = m_new
// and at the end out_i = acc / l, lse_i = m + log l.
//
// Your kernel receives an AttentionArgs<float> (kernels/args.h):
//   a.q, a.k, a.v   [batch, heads, rows, d] views, each with its own strides in elements:
//                   q(b, h, i, c) = a.q[b*a.q_stride[0] + h*a.q_stride[1] + i*a.q_stride[2]
//                                       + c*a.q_stride[3]]   (k and v: a.k_stride, a.v_stride)
//   a.batch, a.heads, a.lq (query rows), a.lk (key and value rows), a.d (head size)
//   a.out           contiguous [batch, heads, lq, d]: out(b, h, i, c) = a.out[((b*heads + h)*lq
//                   + i)*d + c]; arrives uninitialised
//   a.lse           contiguous [batch, heads, lq]; arrives uninitialised
//   a.scale         multiply q . k by it (1/sqrt(d) unless the caller chose another)
//   a.causal        mask j > i (then lq == lk)
//   a.workspace     scratch, a.workspace_size floats. Tiles may live here, or in local arrays,
//                   or in a std::vector of a few tiles: at most
//                   attention_tiled_workspace(a.lq, a.d, 1) floats per thread (kernels/args.h),
//                   about 66000 at d = 64. The front end gives a learner's kernel room for the
//                   whole score matrix (B*H*lq*lk floats), because it cannot know yours is
//                   tiled: more than that at large L, less at small L. The checker gives yours
//                   exactly attention_tiled_workspace(lq, d, 1) floats at L = 300 and 2048 and
//                   counts every byte your kernel allocates: O(L^2) memory anywhere fails.
//
// Check it:  build/prism check flash_attention
#include "kernels/ops/attention/args.h"
#include "kernels/registry.h"

using prism::kernels::AttentionArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_flash_attention([[maybe_unused]] const AttentionArgs<float>& a) {
  // TODO(exercise): for each (batch, head) and each query row (or block of rows), walk the keys
  // in blocks: compute the block's scores, update m, l and acc as above, and write out and lse
  // at the end. Start with one query row at a time and blocks of 64 keys; run the checker; then
  // make it fast (README.md, Performance tiers). When the checker passes, delete this TODO
  // comment: ctest then checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(attention, my_flash_attention);
