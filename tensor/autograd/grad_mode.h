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

// Turns grad mode back on inside a NoGrad region: activation checkpointing re-runs a forward
// from inside the backward engine (which runs with grad off) and needs that forward recorded.
class EnableGrad {
 public:
  EnableGrad();
  ~EnableGrad();
  EnableGrad(const EnableGrad&) = delete;
  EnableGrad& operator=(const EnableGrad&) = delete;

 private:
  bool saved_;
};

}  // namespace prism
