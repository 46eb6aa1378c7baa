// Learning-rate schedules: a function from the step number to the lr, which a schedule sets on
// its optimizer.
//
//   SGD opt(model->parameters(), 0.1, 0.9);
//   CosineAnnealing sched(opt, /*t_max=*/1000, /*eta_min=*/1e-4, /*warmup_steps=*/100);
//   for (int s = 0; s < 1100; ++s) {   // the optimizer steps with lr_at(s)
//     ...; loss.backward(); opt.step(); opt.zero_grad();
//     sched.step();                     // moves to s + 1 and sets lr_at(s + 1)
//   }
//
// Step 0 is the optimizer's first step: constructing a schedule sets lr_at(0) on the optimizer,
// and each step() moves to the next. The base lr is the optimizer's lr when the schedule is
// made.
//
// Warmup (optional, any schedule): for s < W = warmup_steps, lr = base_lr * (s + 1) / W, a
// straight line reaching base_lr at s = W - 1 (never 0, so no step is wasted). From s = W on,
// the schedule's own curve runs, counted from the end of warmup: lr_at(s) = curve(s - W),
// with curve(0) = base_lr.
#pragma once

#include <cstdint>

#include "nn/optim/optimizer.h"

namespace prism::nn::optim {

class LRSchedule {
 public:
  virtual ~LRSchedule() = default;
  LRSchedule(const LRSchedule&) = delete;
  LRSchedule& operator=(const LRSchedule&) = delete;

  // The lr for step s >= 0 (warmup, then the curve). Pure: sets nothing.
  double lr_at(int64_t s) const;
  // Moves to the next step and sets its lr on the optimizer; returns that lr.
  double step();

  int64_t current_step() const { return step_; }
  double base_lr() const { return base_lr_; }
  int64_t warmup_steps() const { return warmup_; }

 protected:
  // The optimizer must outlive the schedule.
  LRSchedule(Optimizer& opt, int64_t warmup_steps);
  // The curve after warmup, u = 0, 1, 2, ... steps after it ended; curve(0) should be base_lr.
  virtual double curve(int64_t u) const = 0;
  // Sets lr_at(0) on the optimizer: each subclass calls it at the end of its constructor, once
  // its own parameters are set (a base constructor cannot call curve()).
  void start();
  void require(bool ok, const char* what, double value) const;

 private:
  Optimizer& opt_;
  double base_lr_;
  int64_t warmup_;
  int64_t step_ = 0;
};

// lr = base_lr * gamma^floor(u / step_size): multiply by gamma every step_size steps
// (PyTorch's StepLR, stepped per optimizer step here).
class StepLR : public LRSchedule {
 public:
  // step_size >= 1, gamma >= 0, warmup_steps >= 0.
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1, int64_t warmup_steps = 0);

 protected:
  double curve(int64_t u) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * u / t_max)) / 2 for u <= t_max: half a
// cosine from base_lr down to eta_min over t_max steps (Loshchilov & Hutter, SGDR, without
// restarts). After t_max the lr stays at eta_min (PyTorch's closed form would climb again).
class CosineAnnealing : public LRSchedule {
 public:
  // t_max >= 1, eta_min >= 0, warmup_steps >= 0.
  CosineAnnealing(Optimizer& opt, int64_t t_max, double eta_min = 0, int64_t warmup_steps = 0);

 protected:
  double curve(int64_t u) const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace prism::nn::optim
