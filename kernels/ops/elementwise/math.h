// The math of every elementwise op, one small functor each, shared by all CPU variants so a
// variant differs only in how it walks memory, never in what it computes.
//
// FLOPs per element (docs/COSTS.md): transcendental functions (exp, log, tanh, sqrt, pow) count
// as 1, as a hardware or libm call is one step from the program's point of view.
#pragma once

#include <cmath>

namespace prism::kernels::math {

struct Neg {
  template <class T>
  T operator()(T x) const {
    return -x;
  }
};
struct Exp {
  template <class T>
  T operator()(T x) const {
    return std::exp(x);
  }
};
struct Log {
  template <class T>
  T operator()(T x) const {
    return std::log(x);
  }
};
struct Sqrt {
  template <class T>
  T operator()(T x) const {
    return std::sqrt(x);
  }
};
struct Tanh {
  template <class T>
  T operator()(T x) const {
    return std::tanh(x);
  }
};
// !(x <= 0) rather than x > 0: a NaN passes through, as IEEE arithmetic and PyTorch do, instead
// of becoming a harmless-looking 0 that hides a diverged layer.
struct Relu {
  template <class T>
  T operator()(T x) const {
    return !(x <= T(0)) ? x : T(0);
  }
};

// sigmoid(x) = 1 / (1 + e^-x), written so that neither branch overflows for large |x|.
struct Sigmoid {
  template <class T>
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    T e = std::exp(x);
    return e / (T(1) + e);
  }
};

// SiLU, or Swish (Elfwing et al., 2018; Ramachandran et al., 2017): x sigmoid(x) =
// x / (1 + e^-x), the gate of SwiGLU. One divide by d = 1 + e^-x and no sign test: for x below
// about -88 (float32) d overflows to inf, and x / inf = -0 and 1 / inf = 0 are the right limits,
// so nothing needs Sigmoid's two branches, whose choice on random signs is mispredicted half the
// time (kernels/ops/swiglu/swiglu.cpp has what that cost).
template <class T>
T silu_denominator(T x) {
  return T(1) + std::exp(-x);
}
struct Silu {
  template <class T>
  T operator()(T x) const {
    return x / silu_denominator(x);
  }
};

// GELU, tanh approximation (as in GPT-2): 0.5 x (1 + tanh(s (x + 0.044715 x^3))), s = sqrt(2/pi).
template <class T>
constexpr T kGeluS = T(0.7978845608028654);
template <class T>
constexpr T kGeluC = T(0.044715);
struct Gelu {
  template <class T>
  T operator()(T x) const {
    return T(0.5) * x * (T(1) + std::tanh(kGeluS<T> * (x + kGeluC<T> * x * x * x)));
  }
};

struct Add {
  template <class T>
  T operator()(T a, T b) const {
    return a + b;
  }
};
struct Sub {
  template <class T>
  T operator()(T a, T b) const {
    return a - b;
  }
};
struct Mul {
  template <class T>
  T operator()(T a, T b) const {
    return a * b;
  }
};
struct Div {
  template <class T>
  T operator()(T a, T b) const {
    return a / b;
  }
};
struct Pow {
  template <class T>
  T operator()(T a, T b) const {
    return std::pow(a, b);
  }
};

// Backward helpers, (forward input or output, upstream gradient) -> input gradient.
// relu'(x) = [x > 0]
struct ReluBackward {
  template <class T>
  T operator()(T x, T g) const {
    return x > T(0) ? g : T(0);
  }
};
// sigmoid' = y (1 - y), with y the forward output
struct SigmoidBackward {
  template <class T>
  T operator()(T y, T g) const {
    return g * y * (T(1) - y);
  }
};
// tanh' = 1 - y^2, with y the forward output
struct TanhBackward {
  template <class T>
  T operator()(T y, T g) const {
    return g * (T(1) - y * y);
  }
};
// silu'(x) = s + x s (1 - s) = s (1 + x (1 - s)), s = sigmoid(x) = 1 / (1 + e^-x) recomputed
// from the forward's input (saving x, not s, keeps one tensor for backward, as gelu does).
struct SiluBackward {
  template <class T>
  T operator()(T x, T g) const {
    const T s = T(1) / silu_denominator(x);
    return g * s * (T(1) + x * (T(1) - s));
  }
};
// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) s (1 + 3 c x^2), t = tanh(s (x + c x^3))
struct GeluBackward {
  template <class T>
  T operator()(T x, T g) const {
    T t = std::tanh(kGeluS<T> * (x + kGeluC<T> * x * x * x));
    T dt = (T(1) - t * t) * kGeluS<T> * (T(1) + T(3) * kGeluC<T> * x * x);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * dt);
  }
};

}  // namespace prism::kernels::math
