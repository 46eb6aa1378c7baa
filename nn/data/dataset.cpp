#include "nn/data/dataset.h"

#include <cstring>
#include <type_traits>
#include <utility>

#include "tensor/storage.h"

namespace prism::nn::data {

Dims ExampleSpec::batch_input_shape(int64_t batch) const {
  Dims d = input_shape;
  d.insert(0, batch);
  return d;
}

Dims ExampleSpec::batch_target_shape(int64_t batch) const {
  Dims d = target_shape;
  d.insert(0, batch);
  return d;
}

std::string ExampleSpec::str() const {
  return "input " + input_shape.str() + " " + dtype_name(input_dtype) + ", target " +
         target_shape.str() + " " + dtype_name(target_dtype);
}

Tensor make_data_tensor(const Dims& shape, DType dtype) {
  const ShapeSize size = checked_shape_size(shape, dtype, "data");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = Storage::allocate(size.nbytes, Device::cpu, MemRole::data);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

namespace {

template <class Src, class Dst>
void copy_strided(const Tensor& src, Dst* dst) {
  const Src* base = static_cast<const Src*>(src.storage()->data()) + src.offset();
  const int nd = src.dim();
  const int64_t n = src.numel();
  if (n == 0) return;
  if (src.is_contiguous()) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(base[i]);
    return;
  }
  // Walk the elements in row-major order with a multi-index counter (an odometer).
  int64_t idx[Dims::kMax] = {};
  int64_t off = 0;
  const Dims& shape = src.shape();
  const Dims& strides = src.strides();
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = static_cast<Dst>(base[off]);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

template <class Src>
void copy_from(const Tensor& src, void* dst, DType dst_dtype) {
  visit_dtype(dst_dtype, [&](auto v) {
    using Dst = decltype(v);
    if constexpr (std::is_arithmetic_v<Src> && std::is_arithmetic_v<Dst>) {
      copy_strided<Src>(src, static_cast<Dst*>(dst));
    } else {
      throw Error(std::string("data: cannot copy ") + dtype_name(src.dtype()) + " into " +
                  dtype_name(dst_dtype) + " samples");
    }
  });
}

}  // namespace

void copy_to_buffer(const Tensor& src, void* dst, DType dst_dtype) {
  if (src.device() != Device::cpu) throw Error("data: copy_to_buffer needs a CPU tensor");
  if (src.is_contiguous() && src.dtype() == dst_dtype) {
    if (src.nbytes() > 0) {
      std::memcpy(
          dst, static_cast<const char*>(src.storage()->data()) + src.offset() * src.element_size(),
          static_cast<size_t>(src.nbytes()));
    }
    return;
  }
  visit_dtype(src.dtype(), [&](auto v) { copy_from<decltype(v)>(src, dst, dst_dtype); });
}

// ---- Dataset ----------------------------------------------------------------------------------

void Dataset::check_index(const char* what, int64_t i) const {
  const int64_t n = size();
  if (i < 0 || i >= n) {
    throw Error(std::string(what) + ": index " + std::to_string(i) +
                " out of range for a data set of " + std::to_string(n) + " examples");
  }
}

ExampleSpec Dataset::spec() const {
  if (size() == 0) throw Error("Dataset::spec: the data set is empty");
  Example e = get(0);
  if (!e.input.defined() || !e.target.defined()) {
    throw Error("Dataset::spec: example 0 has an undefined input or target");
  }
  return ExampleSpec{e.input.shape(), e.input.dtype(), e.target.shape(), e.target.dtype()};
}

void Dataset::fill_batch(std::span<const int64_t> indices, void* input, void* target) const {
  const ExampleSpec s = spec();
  auto* in = static_cast<char*>(input);
  auto* tg = static_cast<char*>(target);
  for (int64_t i : indices) {
    check_index("Dataset::fill_batch", i);
    Example e = get(i);
    if (!e.input.defined() || !e.target.defined() || !(e.input.shape() == s.input_shape) ||
        !(e.target.shape() == s.target_shape)) {
      throw Error("Dataset::fill_batch: example " + std::to_string(i) + " has input " +
                  (e.input.defined() ? e.input.shape().str() : "undefined") + " and target " +
                  (e.target.defined() ? e.target.shape().str() : "undefined") +
                  ", but the data set's examples are " + s.str() + ": cannot stack them");
    }
    copy_to_buffer(e.input, in, s.input_dtype);
    copy_to_buffer(e.target, tg, s.target_dtype);
    in += s.input_bytes();
    tg += s.target_bytes();
  }
}

Batch Dataset::get_batch(std::span<const int64_t> indices) const {
  const ExampleSpec s = spec();
  const auto b = static_cast<int64_t>(indices.size());
  Batch out{make_data_tensor(s.batch_input_shape(b), s.input_dtype),
            make_data_tensor(s.batch_target_shape(b), s.target_dtype)};
  fill_batch(indices, out.input.storage()->data(), out.target.storage()->data());
  return out;
}

// ---- TensorDataset ----------------------------------------------------------------------------

TensorDataset::TensorDataset(Tensor inputs, Tensor targets) {
  if (!inputs.defined() || !targets.defined()) {
    throw Error("TensorDataset: inputs and targets must both be defined tensors");
  }
  if (inputs.dim() < 1 || targets.dim() < 1) {
    throw Error("TensorDataset: inputs " + inputs.shape().str() + " and targets " +
                targets.shape().str() + " need a first (example) dim");
  }
  if (inputs.size(0) != targets.size(0)) {
    throw Error("TensorDataset: inputs " + inputs.shape().str() + " and targets " +
                targets.shape().str() + " have different numbers of examples (" +
                std::to_string(inputs.size(0)) + " vs " + std::to_string(targets.size(0)) + ")");
  }
  if (inputs.device() != Device::cpu || targets.device() != Device::cpu) {
    throw Error("TensorDataset: inputs and targets must be CPU tensors");
  }
  // Training data are not trained: cut them from any graph so a batch never drags one along.
  inputs_ = inputs.detach().contiguous();
  targets_ = targets.detach().contiguous();
  Dims in_shape(inputs_.shape().data() + 1, inputs_.dim() - 1);
  Dims tg_shape(targets_.shape().data() + 1, targets_.dim() - 1);
  spec_ = ExampleSpec{in_shape, inputs_.dtype(), tg_shape, targets_.dtype()};
}

Example TensorDataset::get(int64_t i) const {
  check_index("TensorDataset::get", i);
  return Example{inputs_.select(0, i), targets_.select(0, i)};
}

void TensorDataset::fill_batch(std::span<const int64_t> indices, void* input, void* target) const {
  const auto in_row = static_cast<size_t>(spec_.input_bytes());
  const auto tg_row = static_cast<size_t>(spec_.target_bytes());
  const auto* in_base = static_cast<const char*>(inputs_.storage()->data()) +
                        inputs_.offset() * inputs_.element_size();
  const auto* tg_base = static_cast<const char*>(targets_.storage()->data()) +
                        targets_.offset() * targets_.element_size();
  auto* in = static_cast<char*>(input);
  auto* tg = static_cast<char*>(target);
  for (int64_t i : indices) {
    check_index("TensorDataset::fill_batch", i);
    std::memcpy(in, in_base + static_cast<size_t>(i) * in_row, in_row);
    std::memcpy(tg, tg_base + static_cast<size_t>(i) * tg_row, tg_row);
    in += in_row;
    tg += tg_row;
  }
}

}  // namespace prism::nn::data
