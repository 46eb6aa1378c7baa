// A character transformer's checkpoint carries what `prism generate` needs to use it: the GPT's
// shape and the character vocabulary, in the safetensors metadata (nn/safetensors.h).
//
// Why in the file and not rebuilt at generate time: the vocabulary is the sorted set of the
// training text's bytes (nn/data/text.h), so rebuilding it needs the same text, byte for byte;
// one edited file or another --data and every id would silently mean another character. Kept in
// the checkpoint, the file is self-describing and a mismatch cannot happen.
//
// Keys (all values strings):
//   prism.model          "gpt"
//   prism.gpt.vocab, prism.gpt.block_size, prism.gpt.d_model, prism.gpt.heads,
//   prism.gpt.layers     decimal integers
//   prism.gpt.tied       "true" | "false"
//   prism.vocab.hex      the vocabulary's characters in id order, two hex digits per byte (a
//                        text file may hold bytes that are not UTF-8, which JSON cannot carry)
#pragma once

#include <memory>
#include <string>

#include "nn/data/text.h"
#include "nn/models/gpt.h"
#include "nn/safetensors.h"

namespace prism::nn {

// The metadata for `model` trained on text with `vocab`; empty when `model` is not a GPT.
Metadata text_model_metadata(const Module& model, const data::Vocabulary& vocab);

struct TextModel {
  std::shared_ptr<GPT> model;  // on the cpu, weights loaded, eval mode, dropout 0
  data::Vocabulary vocab;
};

// Reads a checkpoint written by `prism train transformer --save`: the file is validated, its
// metadata must describe a GPT and a vocabulary of the GPT's size, and its tensors must be that
// GPT's, name for name and shape for shape, checked before the GPT is built (the metadata is
// believed only once the tensors agree with it). Anything else is an Error "PATH: what is wrong".
// One field no tensor can check: prism.gpt.heads (the projections are [3 d, d] for any count of
// heads), so a file edited to another divisor of d_model loads as a model that splits the same
// weights into other heads; only its range and that it divides d_model are checked.
TextModel load_text_model(const std::string& path);

}  // namespace prism::nn
