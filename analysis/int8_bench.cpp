#include "analysis/int8_bench.h"

#include <fmt/format.h>
#include <filesystem>

#include "nn/quantized.h"
#include "tensor/random.h"

namespace prism::analysis {

void check_int8_options(const BenchOptions& o) {
  if (o.precision != "int8") return;
  if (o.mode != BenchMode::infer) {
    throw Error(
        "bench --precision int8: int8 is for inference only (post-training quantization: the "
        "rounded weights have no gradient); train in fp32 or bf16, then `prism quantize`, and "
        "bench with --mode infer");
  }
  if (o.device != Device::cpu) {
    throw Error("bench --precision int8: the int8 kernels run on the cpu only");
  }
  if (o.model != "mlp" && o.model != "cnn" && o.model != "lenet") {
    throw Error(
        "bench --precision int8: only the sequential models can be quantized (mlp, cnn), "
        "got " +
        o.model);
  }
  if (!o.load_path.empty() && !std::filesystem::is_regular_file(o.load_path)) {
    throw Error("bench --precision int8: cannot read " + o.load_path + ": no such file");
  }
}

void use_int8_model(const BenchOptions& o, Workload& w, BenchResult& res) {
  res.fp32_weight_bytes = nn::parameter_bytes(w.model());
  std::shared_ptr<nn::QuantizedModel> q;
  if (!o.load_path.empty()) {
    q = nn::load_quantized(w.model(), o.load_path);
    res.int8_source = "loaded from " + o.load_path;
  } else {
    constexpr int64_t kBatches = 4, kRows = 64;
    std::vector<Tensor> batches;
    manual_seed(o.seed + 7);
    for (int64_t b = 0; b < kBatches; ++b) {
      if (o.data) {
        std::vector<int64_t> idx(static_cast<size_t>(kRows));
        for (int64_t i = 0; i < kRows; ++i) {
          idx[static_cast<size_t>(i)] = (b * kRows + i) % o.data->size();
        }
        batches.push_back(o.data->get_batch(idx).input);
      } else {
        batches.push_back(synthetic_input(w.input_spec(), kRows, w.output_width()));
      }
    }
    q = nn::quantize_model(w.model(), batches, {});
    res.int8_source = fmt::format(
        "quantized on the fly, minmax scales from {} batches of {} {} "
        "inputs",
        kBatches, kRows, o.data ? "data set" : "synthetic");
  }
  res.weight_bytes = q->weight_bytes();
  w.replace_model(q);
}

}  // namespace prism::analysis
