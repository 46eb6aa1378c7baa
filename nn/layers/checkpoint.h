// Activation checkpointing (Chen et al., 2016, "Training Deep Nets with Sublinear Memory Cost";
// torch.utils.checkpoint): trade compute for memory.
//
// A training step keeps every activation that backward will read, from the forward until
// backward reaches it: for a stack of L blocks that is L blocks' worth of activations at the
// peak. A checkpointed block keeps only its input. Its forward runs with grad mode off (no
// autograd graph, so its intermediate buffers are freed as soon as they are used) and records
// one autograd node, "checkpoint". When backward reaches that node it runs the block's forward
// again from the kept input, this time recording the graph, and backpropagates the incoming
// gradient through it at once; then that graph is freed before the next block's turn. The
// peak then holds the L block inputs plus ONE block's activations, for one extra forward of
// each checkpointed block per step (about +1/3 of a step's FLOPs when every block is
// checkpointed: a backward costs about two forwards).
//
//   block->set_checkpointed();      // every call of block from now on is checkpointed
//   Tensor y = (*block)(x);         // Module::operator() calls checkpoint(*block, x)
//
// Exactness: the recompute computes the same values with the same kernels, so gradients are
// bit for bit those of the plain run. Two layers draw or update state in their forward, and the
// recompute must not do either twice:
//   - Dropout: the node keeps the random generator's state from before the forward and puts it
//     back for the recompute (the same masks are drawn), then restores the generator to where
//     it was, so the draws that follow are those of a plain run.
//   - BatchNorm2d: in training it updates its running statistics in the forward; during the
//     recompute recomputing() is true and it skips that update (the forward already made it).
//
// In the profile the recompute's ops are in phase "recompute" (not "forward"), under the same
// module paths, so the extra FLOPs and time show as such; its buffers are activations.
//
// The module must outlive the backward of every step that used it (the node holds a reference
// to it, not a copy). Its parameters and the kept input are checked like any saved tensor: one
// modified in place between the forward and the backward (an optimizer step) makes the backward
// fail with an Error instead of recomputing from the new values.
#pragma once

#include <string>

#include "nn/module.h"

namespace prism::nn {

// Runs m.forward(x) checkpointed: with grad mode on and something requiring grad (the input or
// a parameter of m), the result's graph is one "checkpoint" node that recomputes m in backward.
// Otherwise (evaluation, NoGrad) it is simply m.forward(x).
Tensor checkpoint(Module& m, const Tensor& x);

// True while a checkpoint node re-runs a forward in backward (this thread).
bool recomputing();

// Which blocks a `--checkpoint` value selects: "" → 0 (none), "blocks" → 1 (every block),
// "every-N" (N >= 1) → N (blocks 0, N, 2N, ...). Anything else is an Error naming what is
// accepted; `who` starts the message.
int64_t checkpoint_stride(const std::string& spec, const std::string& who);

}  // namespace prism::nn
