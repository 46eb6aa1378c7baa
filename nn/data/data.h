// prism::nn::data: everything that feeds a model.
//
//   dataset.h    Dataset, Example, Batch, TensorDataset
//   loader.h     DataLoader: shuffled batches, per-epoch seeds, background prefetch
//   idx.h        IDX (MNIST-format) files, raw or gzipped; fashion_mnist()
//   synthetic.h  spirals() and shapes(): generated data sets, always available
//   text.h       CharDataset, Vocabulary, default_text(): character-level language modelling
#pragma once

#include "nn/data/dataset.h"
#include "nn/data/idx.h"
#include "nn/data/loader.h"
#include "nn/data/synthetic.h"
#include "nn/data/text.h"
