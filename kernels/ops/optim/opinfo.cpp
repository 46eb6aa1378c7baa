// The descriptions (OpInfos) of the in-place optimizer updates: sgd_update and adam_update.
//
// Size "N": N parameters. Both ops are memory bound (a few FLOPs per 12-28 bytes), so their
// figure of merit is GB/s against the machine's bandwidth. A validation run restores the
// parameter and the optimizer state first, so every variant updates the same numbers; timing
// runs keep updating in place (the values drift a little, which changes no timing).
#include <cstring>

#include "kernels/costs.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/ops/optim/op.h"

namespace prism::opinfo {
namespace {

constexpr const char* kSyntax = "N (number of parameters)";

// Copies `from` into a guarded buffer's data.
void load(GuardedBuffer& to, const CaseVector<float>& from) {
  std::memcpy(to.data(), from.data(), from.size() * sizeof(float));
}

// The unfused (naive-tagged) variants get the temporaries the front end would allocate for
// them (tensor/ops/optim.cpp); fused ones get none. The buffer belongs to the case, so timing
// (which reuses one case) allocates only on the first call, and the buffer goes with the case:
// on cuda it is managed memory, which must not outlive the lab run (case_memory.h).
template <class Args>
void with_workspace(const kernels::KernelEntry& v, Args& a, int64_t elements,
                    CaseVector<float>& scratch) {
  if (v.tag != kernels::VariantTag::naive || elements == 0) return;
  if (scratch.size() < static_cast<size_t>(elements)) scratch.resize(static_cast<size_t>(elements));
  a.workspace = scratch.data();
  a.workspace_size = elements;
}

class SgdCase : public Case {
 public:
  SgdCase(int64_t n, uint64_t seed) : param_(n), velocity_(n) {
    InputRng rng(seed);
    param0_ = rng.vector(n);
    grad_ = rng.vector(n);
    velocity0_ = rng.vector(n, -0.1f, 0.1f);
    prepare_validation();
    a_ = {};
    a_.param = param_.data();
    a_.grad = grad_.data();
    a_.velocity = velocity_.data();
    a_.numel = n;
    a_.lr = 0.01, a_.momentum = 0.9, a_.weight_decay = 1e-4, a_.nesterov = false;
  }
  void prepare_validation() override {
    load(param_, param0_);
    load(velocity_, velocity0_);
  }
  void run(const kernels::KernelEntry& v) override {
    kernels::SgdArgs<float> a = a_;
    with_workspace(v, a, kernels::sgd_per_tensor_workspace(a.numel, true, a.nesterov), scratch_);
    v.get<kernels::SgdArgs, float>()(a);
  }
  std::vector<Output> outputs() override { return {{"param", &param_}, {"velocity", &velocity_}}; }
  profiler::Cost cost() const override {
    return costs::sgd_update(a_.numel, 4, a_.weight_decay != 0, a_.momentum != 0, a_.nesterov);
  }

 private:
  CaseVector<float> param0_, grad_, velocity0_;
  CaseVector<float> scratch_;  // the unfused variants' temporaries
  GuardedBuffer param_, velocity_;
  kernels::SgdArgs<float> a_;
};

class AdamCase : public Case {
 public:
  AdamCase(int64_t n, uint64_t seed) : param_(n), m_(n), v_(n) {
    InputRng rng(seed);
    param0_ = rng.vector(n);
    grad_ = rng.vector(n);
    m0_ = rng.vector(n, -0.1f, 0.1f);
    v0_ = rng.vector(n, 0.f, 0.01f);
    prepare_validation();
    a_ = {};
    a_.param = param_.data();
    a_.grad = grad_.data();
    a_.m = m_.data();
    a_.v = v_.data();
    a_.numel = n;
    a_.lr = 1e-3, a_.beta1 = 0.9, a_.beta2 = 0.999, a_.eps = 1e-8, a_.weight_decay = 0.01;
    a_.decoupled = true;
    // Step 10: bias corrections 1 - beta^10.
    a_.bias_correction1 = 1 - 0.3486784401;     // 0.9^10
    a_.bias_correction2 = 1 - 0.9900448802097;  // 0.999^10
  }
  void prepare_validation() override {
    load(param_, param0_);
    load(m_, m0_);
    load(v_, v0_);
  }
  void run(const kernels::KernelEntry& v) override {
    kernels::AdamArgs<float> a = a_;
    with_workspace(v, a, kernels::adam_per_tensor_workspace(a.numel, !a.decoupled), scratch_);
    v.get<kernels::AdamArgs, float>()(a);
  }
  std::vector<Output> outputs() override { return {{"param", &param_}, {"m", &m_}, {"v", &v_}}; }
  profiler::Cost cost() const override {
    return costs::adam_update(a_.numel, 4, a_.weight_decay != 0, a_.decoupled);
  }

 private:
  CaseVector<float> param0_, grad_, m0_, v0_;
  CaseVector<float> scratch_;  // the unfused variants' temporaries
  GuardedBuffer param_, m_, v_;
  kernels::AdamArgs<float> a_;
};

template <class C>
OpInfo optim_op(const char* name, const char* summary) {
  OpInfo op;
  op.op = name;
  op.size_syntax = kSyntax;
  op.summary = summary;
  op.default_sizes = {"4096", "262144", "4194304"};
  op.validation_sizes = {"1", "7", "4099", "65537"};
  op.tolerance = 1e-5;
  op.tolerance_why =
      "the fused and per-tensor updates do the same IEEE operations in the same order (built "
      "with -ffp-contract=off), so they agree bit for bit on the cpu; a GPU's sqrt and divide "
      "may differ by an ulp";
  const std::string op_name = name;
  op.make = [op_name](const std::string& size, uint64_t seed) -> std::unique_ptr<Case> {
    auto d = parse_dims(op_name, kSyntax, size, 1, 1);
    return std::make_unique<C>(d[0], seed);
  };
  return op;
}

}  // namespace

static void add_optim_op_infos(std::vector<OpInfo>& ops) {
  ops.push_back(optim_op<SgdCase>("sgd_update", "SGD with momentum and weight decay, in place"));
  ops.push_back(optim_op<AdamCase>("adam_update", "AdamW step, in place"));
}

const OpInfoFamily kOptimFamily(700, &add_optim_op_infos);

}  // namespace prism::opinfo
