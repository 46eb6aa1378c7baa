// The math of every elementwise op on the GPU: the same formulas, in the same form, as the CPU
// functors in kernels/ops/elementwise/math.h (which call host-only std:: functions, so they
// cannot be shared). Results differ from the CPU's only by the math library: CUDA's expf,
// logf, tanhf and powf are within 1-2 ulp of the correctly rounded value (CUDA Programming
// Guide, "Mathematical Functions"), glibc's within 1; sqrt and division are correctly rounded
// on both (nvcc's default -prec-sqrt=true -prec-div=true), and +, -, * are IEEE on both.
#pragma once

#include <cuda_runtime.h>

namespace prism::kernels::cuda::math {

// Overloads that pick the float or double version of each CUDA math function.
__device__ inline float dexp(float x) {
  return expf(x);
}
__device__ inline double dexp(double x) {
  return ::exp(x);
}
__device__ inline float dlog(float x) {
  return logf(x);
}
__device__ inline double dlog(double x) {
  return ::log(x);
}
__device__ inline float dsqrt(float x) {
  return sqrtf(x);
}
__device__ inline double dsqrt(double x) {
  return ::sqrt(x);
}
__device__ inline float dtanh(float x) {
  return tanhf(x);
}
__device__ inline double dtanh(double x) {
  return ::tanh(x);
}
__device__ inline float dpow(float a, float b) {
  return powf(a, b);
}
__device__ inline double dpow(double a, double b) {
  return ::pow(a, b);
}

struct Neg {
  template <class T>
  __device__ T operator()(T x) const {
    return -x;
  }
};
struct Exp {
  template <class T>
  __device__ T operator()(T x) const {
    return dexp(x);
  }
};
struct Log {
  template <class T>
  __device__ T operator()(T x) const {
    return dlog(x);
  }
};
struct Sqrt {
  template <class T>
  __device__ T operator()(T x) const {
    return dsqrt(x);
  }
};
struct Tanh {
  template <class T>
  __device__ T operator()(T x) const {
    return dtanh(x);
  }
};
struct Relu {  // NaN passes through, as on the CPU (kernels/ops/elementwise/math.h)
  template <class T>
  __device__ T operator()(T x) const {
    return !(x <= T(0)) ? x : T(0);
  }
};

// sigmoid(x) = 1 / (1 + e^-x), written so that neither branch overflows for large |x|.
struct Sigmoid {
  template <class T>
  __device__ T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + dexp(-x));
    const T e = dexp(x);
    return e / (T(1) + e);
  }
};

// SiLU (Swish): x sigmoid(x) = x / (1 + e^-x), the gate of SwiGLU, as on the CPU: one divide
// and no sign test (for very negative x, 1 + e^-x = inf and x / inf = -0, the right limit).
template <class T>
__device__ inline T silu_denominator(T x) {
  return T(1) + dexp(-x);
}
struct Silu {
  template <class T>
  __device__ T operator()(T x) const {
    return x / silu_denominator(x);
  }
};

// GELU, tanh approximation (as in GPT-2): 0.5 x (1 + tanh(s (x + 0.044715 x^3))), s = sqrt(2/pi).
template <class T>
__device__ inline T gelu_s() {
  return T(0.7978845608028654);
}
template <class T>
__device__ inline T gelu_c() {
  return T(0.044715);
}
struct Gelu {
  template <class T>
  __device__ T operator()(T x) const {
    return T(0.5) * x * (T(1) + dtanh(gelu_s<T>() * (x + gelu_c<T>() * x * x * x)));
  }
};

struct Add {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Sub {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a - b;
  }
};
struct Mul {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a * b;
  }
};
struct Div {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a / b;
  }
};
struct Pow {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return dpow(a, b);
  }
};

// Backward helpers, (forward input or output, upstream gradient) -> input gradient.
// relu'(x) = [x > 0]
struct ReluBackward {
  template <class T>
  __device__ T operator()(T x, T g) const {
    return x > T(0) ? g : T(0);
  }
};
// sigmoid' = y (1 - y), with y the forward output
struct SigmoidBackward {
  template <class T>
  __device__ T operator()(T y, T g) const {
    return g * y * (T(1) - y);
  }
};
// tanh' = 1 - y^2, with y the forward output
struct TanhBackward {
  template <class T>
  __device__ T operator()(T y, T g) const {
    return g * (T(1) - y * y);
  }
};
// silu'(x) = s (1 + x (1 - s)), s = 1 / (1 + e^-x) recomputed from the forward's input
struct SiluBackward {
  template <class T>
  __device__ T operator()(T x, T g) const {
    const T s = T(1) / silu_denominator(x);
    return g * s * (T(1) + x * (T(1) - s));
  }
};
// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) s (1 + 3 c x^2), t = tanh(s (x + c x^3))
struct GeluBackward {
  template <class T>
  __device__ T operator()(T x, T g) const {
    const T s = gelu_s<T>(), c = gelu_c<T>();
    const T t = dtanh(s * (x + c * x * x * x));
    const T dt = (T(1) - t * t) * s * (T(1) + T(3) * c * x * x);
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * dt);
  }
};

}  // namespace prism::kernels::cuda::math
