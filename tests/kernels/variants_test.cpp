// Every op with more than one CPU kernel variant: each variant, run through the tensor front end
// under kernels::Use, must agree with the naive one on random odd-size inputs, contiguous and
// strided (the ggml test-backend-ops idea: a normalized error against a trusted baseline).
//
// The list of ops comes from the registry, so a variant added later (an optimized matmul, a
// fused softmax, a learner's kernel) is checked without editing this file. Each op needs a
// driver that calls it through the front end, in its folder (kernels/ops/<op>/drivers.cpp,
// tests/kernels/drivers.h) or, for the ops whose drivers have not moved there yet, below; an
// op without one fails loudly.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tensor/autocast.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"
#include "tensor/quantized_ops.h"
#include "tests/kernels/drivers.h"
#include "tests/tensor/reference.h"

namespace prism::kernels {
namespace {

using ref::Layout;
using ref::Shape;

Driver unary(Tensor (*op)(const Tensor&), double lo, double hi) {
  return {[lo, hi](DType dt, ref::Rng& rng, bool strided) {
            return std::vector<Tensor>{input({37, 29}, strided, dt, rng, lo, hi)};
          },
          [op](const std::vector<Tensor>& in) { return op(in[0]); }};
}

Driver binary(Tensor (*op)(const Tensor&, const Tensor&), double lo, double hi) {
  return {[lo, hi](DType dt, ref::Rng& rng, bool strided) {
            // [3,1,29] with [37,1]: both operands broadcast.
            return std::vector<Tensor>{input({3, 1, 29}, strided, dt, rng, lo, hi),
                                       input({37, 1}, strided, dt, rng, lo, hi)};
          },
          [op](const std::vector<Tensor>& in) { return op(in[0], in[1]); }};
}

// The backward kernel of a unary op, driven by backward() of the op.
Driver unary_backward(Tensor (*op)(const Tensor&)) {
  return {[](DType dt, ref::Rng& rng, bool strided) {
            return std::vector<Tensor>{input({37, 29}, strided, dt, rng, -3, 3),
                                       input({37, 29}, false, dt, rng)};
          },
          [op](const std::vector<Tensor>& in) {
            return grad_of_input(
                in[0], [op](const Tensor& x) { return op(x); }, in[1]);
          }};
}

Driver reduction(Tensor (*op)(const Tensor&, const std::vector<int>&, bool),
                 std::vector<int> dims) {
  return {[](DType dt, ref::Rng& rng, bool strided) {
            return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng)};
          },
          [op, dims](const std::vector<Tensor>& in) { return op(in[0], dims, false); }};
}

std::map<std::string, std::vector<Driver>> drivers() {
  std::map<std::string, std::vector<Driver>> d;
  for (const auto& [op, make] : folder_drivers()) d[op] = make();
  d["matmul"] = {
      {[](DType dt, ref::Rng& rng, bool strided) {
         return std::vector<Tensor>{input({2, 1, 37, 29}, strided, dt, rng),
                                    input({3, 29, 41}, strided, dt, rng)};
       },
       [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }},
      // Large enough for blocked kernels' fast paths and edges.
      {[](DType dt, ref::Rng& rng, bool strided) {
         return std::vector<Tensor>{input({67, 131}, strided, dt, rng),
                                    input({131, 61}, strided, dt, rng)};
       },
       [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }},
      {[](DType dt, ref::Rng& rng, bool strided) {
         return std::vector<Tensor>{input({29}, strided, dt, rng),
                                    input({29, 7}, strided, dt, rng)};
       },
       [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }},
  };
  // bf16 GEMM (float32 slot: the accumulator's and output's type): bf16 operands rounded from
  // random floats, b read transposed when strided; a batch over a shared b, odd sizes.
  d["matmul_bf16"] = {
      {[](DType, ref::Rng& rng, bool strided) {
         Tensor a = cast(input({3, 37, 131}, false, DType::f32, rng), DType::bf16);
         Tensor b = strided ? cast(input({61, 131}, false, DType::f32, rng), DType::bf16).t()
                            : cast(input({131, 61}, false, DType::f32, rng), DType::bf16);
         return std::vector<Tensor>{a, b};
       },
       [](const std::vector<Tensor>& in) { return matmul_bf16(in[0], in[1]); }},
  };
  // im2col and col2im are the unfolding steps of a convolution under the bf16 policy: each is
  // checked through conv2d there (its output depends on im2col's patches exactly, its input
  // gradient on col2im's sums), stride 2 and padding 1 on odd sizes.
  auto conv_inputs = [](DType, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({2, 3, 9, 11}, strided, DType::f32, rng),
                               input({4, 3, 3, 3}, false, DType::f32, rng)};
  };
  d["im2col"] = {{conv_inputs, [](const std::vector<Tensor>& in) {
                    Autocast bf16(DType::bf16);
                    return conv2d(in[0], in[1], Tensor(), 2, 1);
                  }}};
  d["col2im"] = {{conv_inputs, [](const std::vector<Tensor>& in) {
                    Autocast bf16(DType::bf16);
                    Tensor leaf = in[0].detach();
                    leaf.set_requires_grad();
                    sum(conv2d(leaf, in[1], Tensor(), 2, 1)).backward();
                    return leaf.grad();
                  }}};
  // int8 GEMM (float32 slot: the output's type): int8 operands from quantized random floats, a
  // read transposed when strided; the int32 sums are exact, so the variants agree bit for bit.
  d["matmul_int8"] = {
      {[](DType, ref::Rng& rng, bool strided) {
         const float s = 1.f / 127;
         Tensor a = strided ? quantize(input({131, 67}, false, DType::f32, rng), s).t()
                            : quantize(input({67, 131}, false, DType::f32, rng), s);
         return std::vector<Tensor>{a, quantize(input({61, 131}, false, DType::f32, rng), s),
                                    input({61}, false, DType::f32, rng, 1e-3, 1e-2),
                                    input({61}, false, DType::f32, rng)};
       },
       [](const std::vector<Tensor>& in) {
         return matmul_int8(in[0], 0.02f, in[1], in[2], in[3]);
       }},
  };
  auto sum_fn = [](const Tensor& x, const std::vector<int>& dims, bool k) {
    return sum(x, dims, k);
  };
  auto mean_fn = [](const Tensor& x, const std::vector<int>& dims, bool k) {
    return mean(x, dims, k);
  };
  d["sum"] = {reduction(sum_fn, {}), reduction(sum_fn, {1}), reduction(sum_fn, {0, 2}),
              reduction(sum_fn, {-1})};
  d["mean"] = {reduction(mean_fn, {}), reduction(mean_fn, {1}), reduction(mean_fn, {0, 2}),
               reduction(mean_fn, {-1})};
  for (int dim : {0, 1, 2}) {
    auto make = [](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng)};
    };
    d["max"].push_back({make, [dim](const std::vector<Tensor>& in) { return max(in[0], dim); }});
    d["argmax"].push_back(
        {make, [dim](const std::vector<Tensor>& in) { return argmax(in[0], dim); }});
    d["softmax"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng, -8, 8)};
         },
         [dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); }});
    d["log_softmax"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng, -8, 8)};
         },
         [dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); }});
    auto bw = [dim](Tensor (*f)(const Tensor&, int)) -> Driver {
      return {[](DType dt, ref::Rng& rng, bool strided) {
                return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng, -4, 4),
                                           input({7, 37, 29}, false, dt, rng)};
              },
              [f, dim](const std::vector<Tensor>& in) {
                return grad_of_input(
                    in[0], [f, dim](const Tensor& x) { return f(x, dim); }, in[1]);
              }};
    };
    d["softmax_backward"].push_back(bw([](const Tensor& x, int dm) { return softmax(x, dm); }));
    d["log_softmax_backward"].push_back(
        bw([](const Tensor& x, int dm) { return log_softmax(x, dm); }));
  }
  d["max"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                        return std::vector<Tensor>{input({37, 29}, strided, dt, rng)};
                      },
                      [](const std::vector<Tensor>& in) { return max(in[0]); }});
  d["argmax"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                           return std::vector<Tensor>{input({37, 29}, strided, dt, rng)};
                         },
                         [](const std::vector<Tensor>& in) { return argmax(in[0]); }});

  d["neg"] = {unary([](const Tensor& x) { return neg(x); }, -3, 3)};
  d["exp"] = {unary([](const Tensor& x) { return prism::exp(x); }, -3, 3)};
  d["log"] = {unary([](const Tensor& x) { return prism::log(x); }, 0.1, 5)};
  d["sqrt"] = {unary([](const Tensor& x) { return prism::sqrt(x); }, 0, 5)};
  d["tanh"] = {unary([](const Tensor& x) { return prism::tanh(x); }, -3, 3)};
  d["relu"] = {unary([](const Tensor& x) { return relu(x); }, -3, 3)};
  d["sigmoid"] = {unary([](const Tensor& x) { return sigmoid(x); }, -6, 6)};
  d["gelu"] = {unary([](const Tensor& x) { return gelu(x); }, -4, 4)};
  d["silu"] = {unary([](const Tensor& x) { return silu(x); }, -6, 6)};
  d["add"] = {binary([](const Tensor& a, const Tensor& b) { return add(a, b); }, -2, 2)};
  d["sub"] = {binary([](const Tensor& a, const Tensor& b) { return sub(a, b); }, -2, 2)};
  d["mul"] = {binary([](const Tensor& a, const Tensor& b) { return mul(a, b); }, -2, 2)};
  d["div"] = {binary([](const Tensor& a, const Tensor& b) { return div(a, b); }, 0.5, 2)};
  d["pow"] = {binary([](const Tensor& a, const Tensor& b) { return prism::pow(a, b); }, 0.5, 2)};
  d["relu_backward"] = {unary_backward([](const Tensor& x) { return relu(x); })};
  d["gelu_backward"] = {unary_backward([](const Tensor& x) { return gelu(x); })};
  d["tanh_backward"] = {unary_backward([](const Tensor& x) { return prism::tanh(x); })};
  d["sigmoid_backward"] = {unary_backward([](const Tensor& x) { return sigmoid(x); })};
  d["silu_backward"] = {unary_backward([](const Tensor& x) { return silu(x); })};
  d["copy"] = {{[](DType dt, ref::Rng& rng, bool) {
                  return std::vector<Tensor>{input({7, 37, 29}, false, dt, rng).permute({2, 0, 1})};
                },
                [](const std::vector<Tensor>& in) { return contiguous(in[0]); }}};
  auto gather_make = [](DType dt, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({37, 29}, strided, dt, rng),
                               ref::to_tensor(ref::indices({37, 41}, rng, 29), DType::i64)};
  };
  d["gather"] = {
      {gather_make, [](const std::vector<Tensor>& in) { return gather(in[0], 1, in[1]); }}};
  d["scatter_add"] = {{gather_make, [](const std::vector<Tensor>& in) {
                         return grad_of_input(
                             in[0], [&](const Tensor& x) { return gather(x, 1, in[1]); },
                             ones({37, 41}, in[0].dtype()));
                       }}};
  auto select_make = [](DType dt, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng),
                               ref::to_tensor(ref::indices({53}, rng, 37), DType::i64)};
  };
  d["index_select"] = {
      {select_make, [](const std::vector<Tensor>& in) { return index_select(in[0], 1, in[1]); }}};
  d["index_add"] = {{select_make, [](const std::vector<Tensor>& in) {
                       return grad_of_input(
                           in[0], [&](const Tensor& x) { return index_select(x, 1, in[1]); },
                           ones({7, 53, 29}, in[0].dtype()));
                     }}};
  // conv2d and its gradients: odd sizes, padding and stride 2, a 1x1 kernel (im2col's
  // no-unfold path), a strided input (copied by the front end).
  struct ConvShape {
    Shape x, w;
    int stride, padding;
  };
  for (const ConvShape& cs : {ConvShape{{2, 3, 13, 11}, {5, 3, 3, 3}, 1, 1},
                              ConvShape{{3, 2, 11, 13}, {4, 2, 5, 3}, 2, 2},
                              ConvShape{{2, 5, 7, 9}, {3, 5, 1, 1}, 1, 0}}) {
    auto make = [cs](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input(cs.x, strided, dt, rng), input(cs.w, false, dt, rng),
                                 input({cs.w[0]}, false, dt, rng)};
    };
    const int s = cs.stride, p = cs.padding;
    auto conv = [s, p](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv2d(x, w, b, s, p);
    };
    d["conv2d"].push_back(
        {make, [conv](const std::vector<Tensor>& in) { return conv(in[0], in[1], in[2]); }});
    // The gradients, driven by backward() with the same random output gradient each time.
    auto grad_like = [](const Tensor& y) {
      ref::Rng grng(77);
      return ref::to_tensor(ref::random(y.shape().vec(), grng), y.dtype());
    };
    d["conv2d_backward_input"].push_back(
        {make, [conv, grad_like](const std::vector<Tensor>& in) {
           Tensor y = conv(in[0], in[1], in[2]);
           return grad_of_input(
               in[0], [&](const Tensor& x) { return conv(x, in[1], in[2]); }, grad_like(y));
         }});
    d["conv2d_backward_weight"].push_back(
        {make, [conv, grad_like](const std::vector<Tensor>& in) {
           Tensor y = conv(in[0], in[1], in[2]);
           return grad_of_input(
               in[1], [&](const Tensor& w) { return conv(in[0], w, in[2]); }, grad_like(y));
         }});
  }
  // max_pool2d: the tiling 2x2 / stride 2 case (the optimized path, with an odd size so a
  // row and a column are left over), 3x3 windows that tile, and overlapping padded windows (the
  // optimized variant's fallback).
  struct PoolShape {
    Shape x;
    int kernel, stride, padding;
  };
  for (const PoolShape& ps : {PoolShape{{2, 3, 13, 11}, 2, 2, 0}, PoolShape{{1, 2, 9, 12}, 3, 3, 0},
                              PoolShape{{2, 2, 9, 7}, 3, 2, 1}}) {
    auto make = [ps](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input(ps.x, strided, dt, rng)};
    };
    using PoolFn = Tensor (*)(const Tensor&, int, int, int);
    for (const auto& [name, pool] : {std::pair<std::string, PoolFn>{"max_pool2d", &max_pool2d},
                                     std::pair<std::string, PoolFn>{"avg_pool2d", &avg_pool2d}}) {
      auto run = [ps, pool = pool](const Tensor& x) {
        return pool(x, ps.kernel, ps.stride, ps.padding);
      };
      d[name].push_back({make, [run](const std::vector<Tensor>& in) { return run(in[0]); }});
      // The gradient, driven by backward() with a fixed random output gradient.
      d[name + "_backward"].push_back({make, [run](const std::vector<Tensor>& in) {
                                         Tensor y = run(in[0]);
                                         ref::Rng grng(78);
                                         const Tensor g = ref::to_tensor(
                                             ref::random(y.shape().vec(), grng), y.dtype());
                                         return grad_of_input(in[0], run, g);
                                       }});
    }
  }
  // attention (q, k, v; Lq != Lk, or causal on a prime length past one 128-row tile) and its
  // gradient, all three of dq, dk, dv side by side.
  for (bool causal : {false, true}) {
    auto make = [causal](DType dt, ref::Rng& rng, bool strided) {
      const int64_t lq = causal ? 131 : 37, lk = causal ? 131 : 70, dh = causal ? 80 : 16;
      return std::vector<Tensor>{input({2, 3, lq, dh}, strided, dt, rng, -2, 2),
                                 input({2, 3, lk, dh}, strided, dt, rng, -2, 2),
                                 input({2, 3, lk, dh}, false, dt, rng),
                                 input({2, 3, lq, dh}, false, dt, rng)};
    };
    d["attention"].push_back({make, [causal](const std::vector<Tensor>& in) {
                                return attention(in[0], in[1], in[2], causal);
                              }});
    d["attention_backward"].push_back(
        {make, [causal](const std::vector<Tensor>& in) {
           std::vector<Tensor> leaves;
           for (int i = 0; i < 3; ++i) {
             leaves.push_back(in[static_cast<size_t>(i)].detach());
             leaves.back().set_requires_grad();
           }
           attention(leaves[0], leaves[1], leaves[2], causal).backward(in[3]);
           return concat({leaves[0].grad().flatten(), leaves[1].grad().flatten(),
                          leaves[2].grad().flatten()});
         }});
  }
  // linear_gelu over 2 x 2 output tiles with ragged edges, with and without bias.
  for (bool with_bias : {true, false}) {
    d["linear_gelu"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                                  return std::vector<Tensor>{input({67, 29}, strided, dt, rng),
                                                             input({300, 29}, strided, dt, rng),
                                                             input({300}, false, dt, rng)};
                                },
                                [with_bias](const std::vector<Tensor>& in) {
                                  return linear_gelu(in[0], in[1], with_bias ? in[2] : Tensor());
                                }});
  }
  // linear, forward and both gradients (the driver runs backward through the op): with and
  // without the ReLU on its input and the bias; 67 x 263 -> 300 puts dx in split-k form.
  for (bool relu_input : {true, false}) {
    for (bool with_bias : {true, false}) {
      d["linear"].push_back(
          {[](DType dt, ref::Rng& rng, bool strided) {
             return std::vector<Tensor>{
                 input({67, 263}, strided, dt, rng), input({300, 263}, strided, dt, rng),
                 input({300}, false, dt, rng), input({67, 300}, false, dt, rng)};
           },
           [relu_input, with_bias](const std::vector<Tensor>& in) {
             std::vector<Tensor> leaves;
             for (int i = 0; i < 3; ++i) leaves.push_back(in[i].detach().set_requires_grad());
             Tensor y = linear(leaves[0], leaves[1], with_bias ? leaves[2] : Tensor(), relu_input);
             y.backward(in[3]);
             return concat({y.flatten(), leaves[0].grad().flatten(), leaves[1].grad().flatten()});
           }});
    }
  }
  // layer_norm (131 wide: two 64-lane blocks and a tail; transposed views are copied first),
  // with and without weight and bias; cross_entropy over several online chunks, both
  // reductions; the optimizer updates, returning the updated parameter and state.
  for (bool affine : {true, false}) {
    d["layer_norm"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -3, 5),
                                      input({131}, false, dt, rng), input({131}, false, dt, rng)};
         },
         [affine](const std::vector<Tensor>& in) {
           return layer_norm(in[0], affine ? in[1] : Tensor(), affine ? in[2] : Tensor());
         }});
  }
  // layer_norm_backward: dx, dweight and dbias side by side, with and without the affine part.
  for (bool affine : {true, false}) {
    d["layer_norm_backward"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -3, 5),
                                      input({131}, false, dt, rng), input({131}, false, dt, rng),
                                      input({5, 37, 131}, false, dt, rng)};
         },
         [affine](const std::vector<Tensor>& in) {
           std::vector<Tensor> leaves;
           for (int i = 0; i < 3; ++i) {
             leaves.push_back(in[static_cast<size_t>(i)].detach());
             leaves.back().set_requires_grad();
           }
           layer_norm(leaves[0], affine ? leaves[1] : Tensor(), affine ? leaves[2] : Tensor())
               .backward(in[3]);
           std::vector<Tensor> grads{leaves[0].grad().flatten()};
           if (affine) {
             grads.push_back(leaves[1].grad());
             grads.push_back(leaves[2].grad());
           }
           return concat(grads);
         }});
  }
  // rms_norm and its backward (dx and dweight side by side), with and without a weight.
  for (bool with_weight : {true, false}) {
    auto make = [](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -3, 5),
                                 input({131}, false, dt, rng), input({5, 37, 131}, false, dt, rng)};
    };
    d["rms_norm"].push_back({make, [with_weight](const std::vector<Tensor>& in) {
                               return rms_norm(in[0], with_weight ? in[1] : Tensor());
                             }});
    d["rms_norm_backward"].push_back({make, [with_weight](const std::vector<Tensor>& in) {
                                        Tensor x = in[0].detach().set_requires_grad();
                                        Tensor w = in[1].detach().set_requires_grad();
                                        rms_norm(x, with_weight ? w : Tensor()).backward(in[2]);
                                        if (!with_weight) return x.grad();
                                        return concat({x.grad().flatten(), w.grad()});
                                      }});
  }
  // swiglu and its backward (dgate and dup side by side): gate and up of their own, and the two
  // halves of one [rows, 2 hidden] projection (row stride 2 hidden).
  auto gate_up = [](DType dt, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -6, 6),
                               input({5, 37, 131}, false, dt, rng, -2, 2),
                               input({5, 37, 131}, false, dt, rng)};
  };
  auto halves = [](DType dt, ref::Rng& rng, bool strided) {
    Tensor both = input({37, 2 * 131}, strided, dt, rng, -6, 6);
    return std::vector<Tensor>{both.slice(-1, 0, 131), both.slice(-1, 131, 2 * 131),
                               input({37, 131}, false, dt, rng)};
  };
  using Make = decltype(Driver::make);
  for (const Make& make : {Make(gate_up), Make(halves)}) {
    d["swiglu"].push_back(
        {make, [](const std::vector<Tensor>& in) { return swiglu(in[0], in[1]); }});
    d["swiglu_backward"].push_back({make, [](const std::vector<Tensor>& in) {
                                      Tensor gate = in[0].detach().set_requires_grad();
                                      Tensor up = in[1].detach().set_requires_grad();
                                      swiglu(gate, up).backward(in[2]);
                                      return concat({gate.grad().flatten(), up.grad().flatten()});
                                    }});
    // One gradient asked for: the kernel writes dgate alone.
    d["swiglu_backward"].push_back({make, [](const std::vector<Tensor>& in) {
                                      Tensor gate = in[0].detach().set_requires_grad();
                                      swiglu(gate, in[1]).backward(in[2]);
                                      return gate.grad();
                                    }});
  }
  // cross_entropy_backward: the logits' gradient, both reductions.
  for (Reduction red : {Reduction::mean, Reduction::sum}) {
    d["cross_entropy_backward"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                                             std::vector<int64_t> t(67);
                                             for (int64_t& v : t) v = rng.integer(0, 1031);
                                             return std::vector<Tensor>{
                                                 input({67, 1031}, strided, dt, rng, -6, 6),
                                                 from_vector(t, {67})};
                                           },
                                           [red](const std::vector<Tensor>& in) {
                                             Tensor leaf = in[0].detach();
                                             leaf.set_requires_grad();
                                             cross_entropy(leaf, in[1], red).backward();
                                             return leaf.grad();
                                           }});
  }
  for (Reduction red : {Reduction::mean, Reduction::sum}) {
    d["cross_entropy"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           std::vector<int64_t> t(67);
           for (int64_t& v : t) v = rng.integer(0, 1031);
           return std::vector<Tensor>{input({67, 1031}, strided, dt, rng, -6, 6),
                                      from_vector(t, {67})};
         },
         [red](const std::vector<Tensor>& in) { return cross_entropy(in[0], in[1], red); }});
  }
  auto state = [](DType dt, ref::Rng& rng, bool) {
    return std::vector<Tensor>{input({1037}, false, dt, rng), input({1037}, false, dt, rng),
                               input({1037}, false, dt, rng, -0.1, 0.1),
                               input({1037}, false, dt, rng, 0, 0.01)};
  };
  for (double wd : {0.0, 0.01}) {
    for (bool decoupled : {false, true}) {
      d["adam_update"].push_back({state, [wd, decoupled](const std::vector<Tensor>& in) {
                                    AdamHyper h;
                                    h.weight_decay = wd;
                                    h.decoupled = decoupled;
                                    h.step = 3;
                                    Tensor p = in[0].clone(), m = in[2].clone(), v = in[3].clone();
                                    adam_update_(p, in[1], m, v, h);
                                    return concat({p, m, v});
                                  }});
    }
    for (bool nesterov : {false, true}) {
      d["sgd_update"].push_back({state, [wd, nesterov](const std::vector<Tensor>& in) {
                                   SgdHyper h;
                                   h.lr = 0.05;
                                   h.weight_decay = wd;
                                   h.momentum = 0.9;
                                   h.nesterov = nesterov;
                                   Tensor p = in[0].clone(), vel = in[2].clone();
                                   sgd_update_(p, in[1], vel, h);
                                   return concat({p, vel});
                                 }});
    }
  }
  return d;
}

// ggml's normalized mean squared error: sum (a - b)^2 / sum b^2.
double nmse(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den == 0 ? num : num / den;
}

// How far a variant may be from the baseline: float32 kernels may sum in another order.
double max_nmse(DType dt) {
  return dt == DType::f32 ? 1e-10 : 1e-24;
}

TEST_CASE("every variant of every multi-variant op agrees with the naive one") {
  const auto table = drivers();
  int ops_checked = 0, comparisons = 0;
  for (const OpKernels* k : registry().all()) {
    if (k->device() != Device::cpu || k->entries().size() < 2) continue;
    const std::string op = k->op();
    INFO(("op " + op));
    auto it = table.find(op);
    if (it == table.end()) {
      FAIL_CHECK("op '" << op
                        << "' has several variants but no driver in variants_test.cpp: add one");
      continue;
    }
    const KernelEntry* baseline = k->find("naive") ? k->find("naive") : &k->default_entry();
    ++ops_checked;
    for (DType dt : {DType::f32, DType::f64}) {
      if (!baseline->has(dt)) continue;
      for (size_t c = 0; c < it->second.size(); ++c) {
        const Driver& drv = it->second[c];
        for (bool strided : {false, true}) {
          ref::Rng rng(1000 + c);
          std::vector<Tensor> in = drv.make(dt, rng, strided);
          std::vector<double> expect;
          {
            Use use(op, baseline->name);
            expect = drv.run(in).to_vector<double>();
          }
          for (const KernelEntry& e : k->entries()) {
            if (&e == baseline || !e.has(dt)) continue;
            // lab_test.cpp registers deliberately wrong kernels ("wrong_...") to show the lab
            // catches them; they stay registered when the whole suite runs in one process.
            if (e.name.rfind("wrong_", 0) == 0) continue;
            const std::string ctx = op + " case " + std::to_string(c) + " [" + e.name + " vs " +
                                    baseline->name + "] " + dtype_name(dt) +
                                    (strided ? " strided" : " contiguous");
            INFO(ctx);
            Use use(op, e.name);
            Tensor got_t = drv.run(in);
            std::vector<double> got = got_t.to_vector<double>();
            REQUIRE(got.size() == expect.size());
            ++comparisons;
            if (got_t.dtype() == DType::i64) {
              CHECK(got == expect);  // indices must agree exactly
            } else {
              const double err = nmse(got, expect);
              INFO(("nmse " + std::to_string(err)));
              CHECK(err <= max_nmse(dt));
              bool finite = true;
              for (double v : got) finite = finite && std::isfinite(v);
              CHECK(finite);
            }
          }
        }
      }
    }
  }
  // Today matmul, sum, mean, max, argmax, softmax and log_softmax have a second variant.
  CHECK(ops_checked >= 7);
  CHECK(comparisons > 0);
}

TEST_CASE("the variants check can fail: a deliberately wrong kernel is caught") {
  // A private registry entry is not run by the front end, so check the comparison itself on a
  // result that differs in one element out of many.
  std::vector<double> a(1000, 1.0), b(1000, 1.0);
  CHECK(nmse(a, b) == 0);
  a[500] = 1.01;
  CHECK(nmse(a, b) > max_nmse(DType::f32));
  a[500] = 1.0 + 1e-5;  // a float32 rounding-size difference passes
  CHECK(nmse(a, b) <= max_nmse(DType::f32));
}

}  // namespace
}  // namespace prism::kernels
