#include "tensor/autograd/gradcheck.h"

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism {

namespace {

double projected(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                 const std::vector<Tensor>& inputs, const Tensor& r) {
  NoGrad no_grad;
  return sum(mul(f(inputs), r)).item<double>();
}

}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opts) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.defined() || x.dtype() != DType::f64 || !x.is_leaf() || !x.requires_grad()) {
      throw Error("gradcheck: input " + std::to_string(i) +
                  " must be a float64 leaf tensor with requires_grad");
    }
  }
  // Analytic gradient of L = sum(f(x) * r).
  Tensor y = f(inputs);
  Generator gen(opts.seed);
  std::vector<double> rv(static_cast<size_t>(y.numel()));
  for (double& v : rv) v = gen.uniform() * 2 - 1;
  Tensor r = from_vector(rv, y.shape());
  for (const Tensor& x : inputs) x.zero_grad();
  Tensor loss = sum(mul(y, r));
  if (!loss.requires_grad()) {
    throw Error("gradcheck: the function's output does not depend on any input with requires_grad");
  }
  loss.backward();

  GradcheckResult res;
  // Records the comparison of one derivative; `where` names it for the message.
  auto compare = [&](double analytic, double numeric, const std::function<std::string()>& where) {
    const double err = std::fabs(analytic - numeric);
    res.max_abs_error = std::max(res.max_abs_error, err);
    if (res.ok && err > opts.atol + opts.rtol * std::fabs(numeric)) {
      res.ok = false;
      std::ostringstream m;
      m << "gradcheck: " << where() << ": analytic " << analytic << " vs numeric " << numeric
        << " (error " << err << ")";
      res.message = m.str();
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    std::vector<double> analytic = x.grad().defined()
                                       ? x.grad().to_vector<double>()
                                       : std::vector<double>(static_cast<size_t>(x.numel()), 0.0);
    double* base = static_cast<double*>(x.storage()->data());
    const std::string name = "input " + std::to_string(i) + " " + x.shape().str();
    if (opts.directions > 0) {
      // x + t v for a direction v with entries in [-1, 1): dL/dt = dL/dx . v.
      std::vector<double> saved(static_cast<size_t>(x.numel())), v(saved.size());
      for (int64_t e = 0; e < x.numel(); ++e) {
        saved[static_cast<size_t>(e)] = base[detail::element_offset(x, e)];
      }
      auto set = [&](double t) {
        for (int64_t e = 0; e < x.numel(); ++e) {
          const auto k = static_cast<size_t>(e);
          base[detail::element_offset(x, e)] = saved[k] + t * v[k];
        }
      };
      for (int d = 0; d < opts.directions; ++d) {
        double dot = 0;
        for (size_t k = 0; k < v.size(); ++k) {
          v[k] = gen.uniform() * 2 - 1;
          dot += analytic[k] * v[k];
        }
        set(opts.eps);
        const double up = projected(f, inputs, r);
        set(-opts.eps);
        const double down = projected(f, inputs, r);
        set(0);
        compare(dot, (up - down) / (2 * opts.eps),
                [&] { return name + ", direction " + std::to_string(d); });
      }
    } else {
      for (int64_t e = 0; e < x.numel(); ++e) {
        const int64_t off = detail::element_offset(x, e);
        const double saved = base[off];
        base[off] = saved + opts.eps;
        const double up = projected(f, inputs, r);
        base[off] = saved - opts.eps;
        const double down = projected(f, inputs, r);
        base[off] = saved;
        compare(analytic[static_cast<size_t>(e)], (up - down) / (2 * opts.eps),
                [&] { return name + ", element " + std::to_string(e); });
      }
    }
    x.zero_grad();
  }
  return res;
}

}  // namespace prism
