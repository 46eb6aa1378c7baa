// `prism lab OP --device cuda`: the kernel lab on the GPU. Every CUDA variant must validate
// against the CPU kernel on the same (managed) inputs, odd sizes included, and get timed rows;
// a wrong CUDA variant must be caught. The buffers must all be managed memory while the lab
// runs, and freed when it is done.
#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <string>

#include "kernels/gpu_runtime.h"
#include "kernels/lab/lab.h"
#include "kernels/opinfo/case_memory.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/opinfo/validate.h"
#include "kernels/registry.h"
#include "kernels/ops/matmul/args.h"

namespace prism {
namespace {

lab::LabOptions quick_cuda(const std::string& op, std::vector<std::string> sizes) {
  lab::LabOptions o;
  o.op = op;
  o.device = Device::cuda;
  o.sizes = std::move(sizes);
  o.repetitions = 3;
  o.min_sample_ms = 0.2;
  return o;
}

void check_all_valid_and_timed(const lab::LabResult& r) {
  CHECK(r.device == Device::cuda);
  CHECK_FALSE(r.device_name.empty());
  const kernels::OpKernels& k = kernels::registry().at(r.op, Device::cuda);
  int with_f32 = 0;
  for (const auto& e : k.entries()) with_f32 += e.has(DType::f32) ? 1 : 0;
  CHECK(static_cast<int>(r.validation.size()) == with_f32);
  for (const auto& v : r.validation) {
    CHECK_MESSAGE(v.valid,
                  r.op << " CUDA variant " << v.variant << " worst error " << v.worst_error);
    for (const auto& c : v.checks)
      CHECK_MESSAGE(c.ok, v.variant << " at " << c.size << ": " << c.what);
  }
  for (const auto& row : r.rows) {
    CHECK_MESSAGE(row.timed, row.variant << " " << row.note);
    CHECK(row.calls_per_sample >= 1);
    CHECK(row.median_ns > 0);
  }
  // Everything the lab made was managed memory, and all of it is gone.
  CHECK(opinfo::case_managed_bytes() == 0);
  CHECK(opinfo::case_device() == Device::cpu);
}

// Correct unless told otherwise: other suites in this binary that loop over every CUDA matmul
// variant see the naive kernel's results, while the lab test below switches the fault on.
std::atomic<bool> g_skip_last_row{false};

void matmul_skips_last_row(const kernels::MatmulArgs<float>& a) {
  kernels::MatmulArgs<float> b = a;
  if (g_skip_last_row && b.m > 0) b.m -= 1;  // row m-1 of C is never written
  kernels::registry().at("matmul", Device::cuda).at("naive").get<kernels::MatmulArgs, float>()(b);
}

}  // namespace

TEST_CASE("cuda lab: managed lab buffers are reachable from the host and freed") {
  {
    const opinfo::ScopedCaseDevice scope(Device::cuda);
    opinfo::CaseVector<float> v(1000, 1.f);
    CHECK(opinfo::case_is_managed(v.data()));
    CHECK(opinfo::case_managed_bytes() >= 4000);
    v[999] = 2.f;
    opinfo::prefetch_case_buffers();
    kernels::gpu::synchronize();
    CHECK(v[999] == 2.f);  // migrates back on the host's touch
  }
  CHECK(opinfo::case_managed_bytes() == 0);
  // A block made under one setting is freed the way it was made under the other.
  opinfo::CaseVector<float> host(10);
  CHECK_FALSE(opinfo::case_is_managed(host.data()));
  const opinfo::ScopedCaseDevice scope(Device::cuda);
  host = opinfo::CaseVector<float>();
}

TEST_CASE("cuda lab: every CUDA matmul variant validates against the CPU and is timed") {
  const lab::LabResult r = lab::run_lab(quick_cuda("matmul", {"33x65x129", "64"}));
  check_all_valid_and_timed(r);
  CHECK(r.baseline == "reference");  // the CPU's Eigen kernel
  // x reference is against cuBLAS, the CUDA reference.
  for (const auto& row : r.rows) {
    if (row.variant == "reference") CHECK(row.x_ref == doctest::Approx(1.0));
  }
  const std::string text = lab::format_lab(r);
  CHECK(text.find("validated against the CPU's 'reference'") != std::string::npos);
  const std::string json = lab::lab_json(r);
  CHECK(json.find("\"device\": \"cuda\"") != std::string::npos);
}

TEST_CASE("cuda lab: every CUDA softmax variant validates against the CPU and is timed") {
  check_all_valid_and_timed(lab::run_lab(quick_cuda("softmax", {"37x1031", "64x64:t"})));
  check_all_valid_and_timed(lab::run_lab(quick_cuda("log_softmax", {"5x4099"})));
}

// The CUDA suite's main check: every CUDA variant of every described op (kernels/opinfo) against
// the CPU baseline on every sample of the op's description, with the lab's one validation
// routine on managed buffers. A CUDA op without a description fails here.
TEST_CASE("cuda: every CUDA variant of every op agrees with the CPU on every sample") {
  std::set<std::string> described;
  int comparisons = 0;
  for (const opinfo::OpInfo& op : opinfo::op_infos()) {
    described.insert(op.op);
    const kernels::OpKernels* cuda = kernels::registry().find(op.op, Device::cuda);
    if (!cuda) {
      MESSAGE("no CUDA kernels for " << op.op);
      continue;
    }
    const kernels::KernelEntry& baseline =
        opinfo::baseline_of(kernels::registry().at(op.op, Device::cpu));
    const opinfo::ScopedCaseDevice managed(Device::cuda);
    uint64_t seed = 100;
    for (const kernels::KernelEntry& e : cuda->entries()) {
      if (!e.has(DType::f32)) continue;
      for (const std::string& size : op.validation_sizes) {
        const opinfo::ValidationCheck c =
            opinfo::validate_variant(op, e, baseline, size, ++seed, Device::cuda);
        CHECK_MESSAGE(c.ok, op.op << " CUDA " << e.name << " vs CPU " << baseline.name << " at "
                                  << size << ": error " << c.error << " (tolerance " << op.tolerance
                                  << ") " << c.what);
        ++comparisons;
      }
    }
  }
  for (const kernels::OpKernels* k : kernels::registry().all()) {
    if (k->device() == Device::cuda) {
      CHECK_MESSAGE(described.count(k->op()) == 1, k->op() << " has CUDA kernels but no OpInfo");
    }
  }
  CHECK(comparisons > 50);
  CHECK(opinfo::case_managed_bytes() == 0);
}

TEST_CASE(
    "cuda lab: a CUDA variant that leaves a row unwritten fails validation and is not timed") {
  kernels::registry()
      .op("matmul", Device::cuda)
      .add<kernels::MatmulArgs>("skips_last_row", kernels::VariantTag::user, "test",
                                &matmul_skips_last_row);
  g_skip_last_row = true;
  lab::LabOptions o = quick_cuda("matmul", {"9x5x7"});
  o.variants = {"reference", "skips_last_row"};
  const lab::LabResult r = lab::run_lab(o);
  g_skip_last_row = false;
  REQUIRE(r.validation.size() == 2);
  CHECK(r.validation[0].valid);
  CHECK_FALSE(r.validation[1].valid);
  bool unwritten = false;
  for (const auto& c : r.validation[1].checks) {
    unwritten = unwritten || c.what.find("unwritten") != std::string::npos;
  }
  CHECK(unwritten);
  for (const auto& row : r.rows) {
    if (row.variant == "skips_last_row") CHECK_FALSE(row.timed);
  }
}

}  // namespace prism
