#include "tensor/autograd/grad_mode.h"

namespace prism {

namespace {
thread_local bool t_grad_enabled = true;
}

bool grad_enabled() { return t_grad_enabled; }
NoGrad::NoGrad() : saved_(t_grad_enabled) { t_grad_enabled = false; }
NoGrad::~NoGrad() { t_grad_enabled = saved_; }
EnableGrad::EnableGrad() : saved_(t_grad_enabled) { t_grad_enabled = true; }
EnableGrad::~EnableGrad() { t_grad_enabled = saved_; }

}  // namespace prism
