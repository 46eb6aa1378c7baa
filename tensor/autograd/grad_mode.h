// Grad mode: whether ops record how to differentiate themselves. On by default; off inside a
// NoGrad guard (evaluation, optimizer updates) and while the engine runs backward.
#pragma once

namespace prism {

bool grad_enabled();

class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool saved_;
};

}  // namespace prism
