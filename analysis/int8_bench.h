// `prism bench MODEL --precision int8`: the int8 post-training-quantized twin of the model
// (nn/quantized.h) timed in its place, inference only.
#pragma once

#include "analysis/model_bench.h"
#include "analysis/workload.h"

namespace prism::analysis {

// Refuses what int8 cannot run, before any work: training (quantized weights have no
// gradient), a device other than the cpu, a model other than mlp and cnn; and, with
// BenchOptions::load_path, a missing file.
void check_int8_options(const BenchOptions& o);

// Replaces w's model by its int8 twin: loaded from o.load_path, or quantized from the model's
// own weights with minmax scales calibrated on 4 batches of 64 of the bench's inputs (the data
// set's first examples, or synthetic ones from the seed). Records the weight bytes of both and
// where the twin came from in `res`.
void use_int8_model(const BenchOptions& o, Workload& w, BenchResult& res);

}  // namespace prism::analysis
