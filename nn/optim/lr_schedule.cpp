#include "nn/optim/lr_schedule.h"

#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>

namespace prism::nn::optim {

LRSchedule::LRSchedule(Optimizer& opt, int64_t warmup_steps)
    : opt_(opt), base_lr_(opt.lr()), warmup_(warmup_steps) {
  require(warmup_steps >= 0, "warmup_steps must be >= 0", static_cast<double>(warmup_steps));
}

void LRSchedule::require(bool ok, const char* what, double value) const {
  if (ok) return;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", value);
  throw Error(std::string("lr schedule: ") + what + ", got " + buf);
}

double LRSchedule::lr_at(int64_t s) const {
  require(s >= 0, "step must be >= 0", static_cast<double>(s));
  if (s < warmup_) return base_lr_ * static_cast<double>(s + 1) / static_cast<double>(warmup_);
  return curve(s - warmup_);
}

void LRSchedule::start() {
  opt_.set_lr(lr_at(step_));
}

double LRSchedule::step() {
  const double lr = lr_at(step_ + 1);
  opt_.set_lr(lr);
  ++step_;
  return lr;
}

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma, int64_t warmup_steps)
    : LRSchedule(opt, warmup_steps), step_size_(step_size), gamma_(gamma) {
  require(step_size >= 1, "StepLR step_size must be >= 1", static_cast<double>(step_size));
  require(std::isfinite(gamma) && gamma >= 0, "StepLR gamma must be >= 0", gamma);
  start();
}

double StepLR::curve(int64_t u) const {
  return base_lr() * std::pow(gamma_, static_cast<double>(u / step_size_));
}

CosineAnnealing::CosineAnnealing(Optimizer& opt, int64_t t_max, double eta_min,
                                 int64_t warmup_steps)
    : LRSchedule(opt, warmup_steps), t_max_(t_max), eta_min_(eta_min) {
  require(t_max >= 1, "CosineAnnealing t_max must be >= 1", static_cast<double>(t_max));
  require(std::isfinite(eta_min) && eta_min >= 0, "CosineAnnealing eta_min must be >= 0", eta_min);
  start();
}

double CosineAnnealing::curve(int64_t u) const {
  if (u >= t_max_) return eta_min_;
  const double progress = static_cast<double>(u) / static_cast<double>(t_max_);
  return eta_min_ + (base_lr() - eta_min_) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

}  // namespace prism::nn::optim
