// The kernel lab: it must catch wrong kernels (bad values, unwritten outputs, out-of-bounds
// writes) before timing anything, and its rows must carry what the JSON promises.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>

#include "kernels/gpu_runtime.h"
#include "kernels/lab/lab.h"
#include "kernels/opinfo/case_memory.h"
#include "kernels/opinfo/op_info.h"
#include "kernels/registry.h"
#include "profiler/statistics.h"
#include "tests/test_util.h"
#include "kernels/ops/matmul/args.h"

namespace {

using namespace prism;
using kernels::MatmulArgs;
using testing::contains;
using testing::error_of;

// Three classic mistakes, each registered as a user variant inside the test that needs it
// (each doctest case runs in its own process under ctest, and these never leak into others).
void matmul_off_by_one(const MatmulArgs<float>& a) {  // writes one element past C
  for (int64_t i = 0; i < a.m; ++i) {
    for (int64_t j = 0; j <= a.n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < a.k && j < a.n; ++p) {
        acc += a.a[i * a.a_rs + p * a.a_cs] * a.b[p * a.b_rs + j * a.b_cs];
      }
      a.c[i * a.n + j] = acc;
    }
  }
}

void matmul_skips_last_row(const MatmulArgs<float>& a) {  // leaves row m-1 unwritten
  for (int64_t i = 0; i + 1 < a.m; ++i) {
    for (int64_t j = 0; j < a.n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < a.k; ++p)
        acc += a.a[i * a.a_rs + p * a.a_cs] * a.b[p * a.b_rs + j * a.b_cs];
      a.c[i * a.n + j] = acc;
    }
  }
}

void matmul_ignores_strides(const MatmulArgs<float>& a) {  // assumes row-major A and B
  for (int64_t i = 0; i < a.m; ++i) {
    for (int64_t j = 0; j < a.n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < a.k; ++p) acc += a.a[i * a.k + p] * a.b[p * a.n + j];
      a.c[i * a.n + j] = acc;
    }
  }
}

lab::LabOptions quick(const std::string& variant) {
  lab::LabOptions o;
  o.op = "matmul";
  o.sizes = {"9x5x7"};
  o.variants = {"reference", variant};
  o.repetitions = 3;
  o.min_sample_ms = 0.1;
  return o;
}

const lab::VariantValidation& validation_of(const lab::LabResult& r, const std::string& v) {
  for (const auto& x : r.validation) {
    if (x.variant == v) return x;
  }
  FAIL("no validation for " << v);
  return r.validation.front();
}

}  // namespace

TEST_CASE("lab: a kernel writing past its output trips the guard values") {
  kernels::registry()
      .op("matmul", Device::cpu)
      .add<MatmulArgs>("wrong_off_by_one", kernels::VariantTag::user, "test", &matmul_off_by_one);
  const lab::LabResult r = lab::run_lab(quick("wrong_off_by_one"));
  const auto& v = validation_of(r, "wrong_off_by_one");
  CHECK_FALSE(v.valid);
  bool guard_failure = false;
  for (const auto& c : v.checks) guard_failure = guard_failure || !c.guards_ok;
  CHECK(guard_failure);
  // A failing variant is reported, never timed.
  for (const auto& row : r.rows) {
    if (row.variant == "wrong_off_by_one") {
      CHECK_FALSE(row.timed);
      CHECK(contains(row.note, "failed validation"));
    }
  }
}

TEST_CASE("lab: an output element left unwritten fails validation") {
  kernels::registry()
      .op("matmul", Device::cpu)
      .add<MatmulArgs>("wrong_skips_row", kernels::VariantTag::user, "test",
                       &matmul_skips_last_row);
  const lab::LabResult r = lab::run_lab(quick("wrong_skips_row"));
  const auto& v = validation_of(r, "wrong_skips_row");
  CHECK_FALSE(v.valid);
  CHECK(contains(lab::format_lab(r), "unwritten"));
}

TEST_CASE("lab: a kernel that ignores strides passes contiguous sizes but fails transposed ones") {
  kernels::registry()
      .op("matmul", Device::cpu)
      .add<MatmulArgs>("wrong_no_strides", kernels::VariantTag::user, "test",
                       &matmul_ignores_strides);
  const lab::LabResult r = lab::run_lab(quick("wrong_no_strides"));
  const auto& v = validation_of(r, "wrong_no_strides");
  CHECK_FALSE(v.valid);
  int transposed_checks = 0;
  for (const auto& c : v.checks) {
    if (c.size == "7x13x5") CHECK(c.ok);
    // ":tn", ":nt", ":tt": at least one operand is a transposed view.
    const auto colon = c.size.find(':');
    if (colon != std::string::npos && c.size.find('t', colon) != std::string::npos) {
      ++transposed_checks;
      CHECK_MESSAGE(!c.ok, c.size);
    }
  }
  CHECK(transposed_checks >= 3);
}

TEST_CASE("lab: correct variants validate and produce timed rows with statistics") {
  lab::LabOptions o = quick("naive");
  o.peak_gflops = 100;
  o.peak_gbs = 40;
  const lab::LabResult r = lab::run_lab(o);
  REQUIRE(r.rows.size() == 2);
  for (const auto& row : r.rows) {
    CHECK(row.valid);
    REQUIRE(row.timed);
    CHECK(row.samples_ns.size() == 3);
    CHECK(row.median_ns > 0);
    CHECK(row.ci_low_ns <= row.median_ns);
    CHECK(row.ci_high_ns >= row.median_ns);
    CHECK(row.flops == 2 * 9 * 5 * 7);
    CHECK(row.gflops > 0);
    CHECK(row.pct_peak_flops > 0);
  }
  // The naive row's speed-up over itself is exactly 1; over the reference it has an interval.
  CHECK(r.rows[1].x_naive == doctest::Approx(1.0));
  CHECK(r.rows[1].x_ref > 0);
  const auto doc = nlohmann::json::parse(lab::lab_json(r));
  for (const char* key :
       {"variant", "size", "threads", "valid", "median_ns", "ci_low_ns", "ci_high_ns", "gflops"}) {
    CHECK_MESSAGE(doc["rows"][0].contains(key), key);
  }
}

void matmul_by_naive(const MatmulArgs<float>& a) {  // "hands" every call to the naive loop
  kernels::registry().at("matmul", Device::cpu).at("naive").get<MatmulArgs, float>()(a);
}
std::string hands_to_naive() {
  return "no such unit here: each call runs 'naive'";
}
std::string runs_itself() {
  return "";
}

TEST_CASE(
    "lab: a variant that runs another in its place says so, in the row, the report and JSON") {
  auto& op = kernels::registry().op("matmul", Device::cpu);
  op.add<MatmulArgs>("needs_unit", kernels::VariantTag::user, "test", &matmul_by_naive)
      .runs_instead = &hands_to_naive;
  op.add<MatmulArgs>("has_unit", kernels::VariantTag::user, "test", &matmul_by_naive).runs_instead =
      &runs_itself;
  lab::LabOptions o = quick("needs_unit");
  o.variants.push_back("has_unit");
  const lab::LabResult r = lab::run_lab(o);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].runs_instead.empty());  // reference: no hook
  CHECK(r.rows[1].runs_instead == "no such unit here: each call runs 'naive'");
  CHECK(r.rows[2].runs_instead.empty());  // the hook says it runs as itself
  const std::string text = lab::format_lab(r);
  CHECK(contains(text,
                 "did not run as itself: no such unit here: each call runs 'naive'; the row above "
                 "times that"));
  const auto doc = nlohmann::json::parse(lab::lab_json(r));
  CHECK(doc["rows"][1]["runs_instead"] == "no such unit here: each call runs 'naive'");
  CHECK_FALSE(doc["rows"][2].contains("runs_instead"));
}

TEST_CASE("lab: pooling a later run's samples summarizes each row again over all of them") {
  lab::LabOptions o = quick("naive");
  o.peak_gflops = 100;
  lab::LabResult r = lab::run_lab(o);
  lab::LabOptions more = o;
  more.variants = {"naive"};  // the reference's row gets nothing
  more.repetitions = 5;
  const lab::LabResult extra = lab::run_lab(more);
  const lab::TimingRow naive_before = r.rows[1];
  lab::pool_samples(r, extra, 1);
  REQUIRE(r.rows[1].variant == "naive");
  CHECK(r.rows[1].samples_ns.size() == 8);
  CHECK(r.rows[0].samples_ns.size() == 3);
  std::vector<double> all = naive_before.samples_ns;
  all.insert(all.end(), extra.rows[0].samples_ns.begin(), extra.rows[0].samples_ns.end());
  CHECK(r.rows[1].median_ns == doctest::Approx(profiler::stats::median(all)));
  CHECK(r.rows[1].gflops == doctest::Approx(r.rows[1].flops / r.rows[1].median_ns));
  CHECK(r.rows[1].pct_peak_flops > 0);
  // Its speed-ups compared samples it no longer has alone: cleared, not left stale.
  CHECK(r.rows[1].x_naive == 0);
  CHECK(r.rows[1].x_ref == 0);
  CHECK(r.rows[0].x_ref == doctest::Approx(1.0));  // untouched
}

TEST_CASE("lab: every op the lab knows validates all its built-in variants") {
  for (const opinfo::OpInfo& op : opinfo::op_infos()) {
    lab::LabOptions o;
    o.op = op.op;
    o.sizes = {op.validation_sizes.front()};
    o.repetitions = 1;
    o.min_sample_ms = 0.01;
    // Built-in only: the deliberately wrong user variants other cases register stay in the
    // registry when the whole suite runs in one process.
    for (const auto& e : kernels::registry().at(op.op, Device::cpu).entries()) {
      if (e.tag != kernels::VariantTag::user) o.variants.push_back(e.name);
    }
    const lab::LabResult r = lab::run_lab(o);
    for (const auto& v : r.validation) {
      CHECK_MESSAGE(v.valid, op.op << " variant " << v.variant << " worst error " << v.worst_error);
    }
  }
}

TEST_CASE("lab: bad requests are clear errors") {
  CHECK(contains(error_of([] { opinfo::find_op_info("nosuch"); }), "the lab knows: matmul"));
  const opinfo::OpInfo& mm = opinfo::find_op_info("matmul");
  CHECK(contains(error_of([&] { mm.make("12x", 1); }), "expected N or MxKxN"));
  CHECK(contains(error_of([&] { mm.make("3x4", 1); }), "expected N or MxKxN"));
  CHECK(contains(error_of([&] { mm.make("0", 1); }), "bad size '0'"));
  CHECK(contains(error_of([&] { mm.make("4:tx", 1); }), "bad form"));
  const opinfo::OpInfo& conv = opinfo::find_op_info("conv2d");
  CHECK(contains(error_of([&] { conv.make("1x1x2x2x1x5:p0", 1); }), "not a valid convolution"));
  lab::LabOptions o = quick("nosuch");
  CHECK(contains(error_of([&] { lab::run_lab(o); }), "nosuch"));
}

TEST_CASE("lab: the input generator is reproducible and inside its range") {
  opinfo::InputRng a(7), b(7), c(8);
  const auto va = a.vector(1000, -2, 3), vb = b.vector(1000, -2, 3), vc = c.vector(1000, -2, 3);
  CHECK(va == vb);
  CHECK(va != vc);
  for (float x : va) {
    CHECK(x >= -2);
    CHECK(x < 3);
  }
}

TEST_CASE("lab: guard buffers notice writes on either side") {
  opinfo::GuardedBuffer g(10);
  CHECK(g.guards_intact());
  g.data()[9] = 1;
  CHECK(g.guards_intact());
  g.data()[10] = 1;
  CHECK_FALSE(g.guards_intact());
  opinfo::GuardedBuffer h(10);
  h.data()[-1] = 0;
  CHECK_FALSE(h.guards_intact());
  const opinfo::BufferReport r = h.inspect("h", true);
  CHECK(r.written_before == 1);
  CHECK(r.lowest == -1);
  CHECK(r.unwritten == 10);  // nothing written yet: every element still holds the fill value
}

TEST_CASE("lab: a guarded buffer tells unwritten, read-before-written and scratch apart") {
  opinfo::GuardedBuffer g(8, 16);
  g.poison();
  for (int i = 0; i < 6; ++i) g.data()[i] = 1.f;
  g.data()[6] = g.data()[6] + 1.f;  // out += ... before out was set: NaN with the payload
  const opinfo::BufferReport r = g.inspect("out", true);
  CHECK_FALSE(r.out_of_bounds());
  CHECK(r.read_first == 1);
  CHECK(r.first_read_first == 6);
  CHECK(r.unwritten == 1);
  CHECK(r.first_unwritten == 7);
  CHECK_FALSE(r.clean());
  opinfo::GuardedBuffer s(4);
  s.poison_as_scratch();  // scratch need not be written: only its guards are checked
  CHECK(s.inspect("workspace", false).clean());
}

TEST_CASE("lab: CaseAllocator on the cpu gives 64-byte aligned host memory and frees it") {
  REQUIRE(opinfo::case_device() == Device::cpu);
  for (size_t n : {size_t{1}, size_t{3}, size_t{17}, size_t{1000}, size_t{1} << 20}) {
    opinfo::CaseVector<float> v(n, 1.f);
    CHECK(reinterpret_cast<uintptr_t>(v.data()) % 64 == 0);
    CHECK_FALSE(opinfo::case_is_managed(v.data()));
    v.back() = 2.f;  // the whole block is ours
    opinfo::CaseVector<int64_t> idx(n);
    CHECK(reinterpret_cast<uintptr_t>(idx.data()) % 64 == 0);
  }
  // Growing reallocates through the allocator and frees the old block (under ASan a leak or a
  // mismatched free would be reported here).
  opinfo::CaseVector<double> grow;
  for (int i = 0; i < 5000; ++i) grow.push_back(i);
  CHECK(reinterpret_cast<uintptr_t>(grow.data()) % 64 == 0);
  CHECK(grow[4999] == 4999);
  void* raw = opinfo::case_allocate(0);  // zero bytes still give a distinct block
  CHECK(raw != nullptr);
  opinfo::case_deallocate(raw, 0);
  CHECK(opinfo::case_managed_bytes() == 0);
  // A guarded buffer's data sits 64 floats into its block: aligned too.
  opinfo::GuardedBuffer g(33);
  CHECK(reinterpret_cast<uintptr_t>(g.data()) % 64 == 0);
}

TEST_CASE("lab: the lab device is cpu unless set, and a scope restores it") {
  CHECK(opinfo::case_device() == Device::cpu);
  {
    const opinfo::ScopedCaseDevice scope(Device::cuda);
    CHECK(opinfo::case_device() == Device::cuda);
    if (!kernels::gpu::available()) {
      // Managed memory needs a GPU: the allocation says so instead of handing out host memory.
      CHECK(contains(error_of([] { opinfo::CaseVector<float> v(8); }), "CUDA is not available"));
    }
  }
  CHECK(opinfo::case_device() == Device::cpu);
}

TEST_CASE("lab: --device cuda without a usable GPU is a clear error") {
  if (kernels::gpu::available()) {
    MESSAGE("skipped: a GPU is available here (tests/cuda/lab_test.cpp runs the CUDA lab)");
    return;
  }
  lab::LabOptions o = quick("naive");
  o.device = Device::cuda;
  CHECK(contains(error_of([&] { lab::run_lab(o); }), "CUDA is not available"));
  CHECK(opinfo::case_device() == Device::cpu);  // nothing left switched
}

TEST_CASE("lab: JSON rows and the document name the device") {
  lab::LabOptions o = quick("naive");
  o.repetitions = 1;
  const lab::LabResult r = lab::run_lab(o);
  CHECK(r.device == Device::cpu);
  const auto doc = nlohmann::json::parse(lab::lab_json(r));
  CHECK(doc["device"] == "cpu");
  CHECK_FALSE(doc.contains("peak_source"));
  for (const auto& row : doc["rows"]) CHECK(row["device"] == "cpu");
  CHECK(contains(lab::format_lab(r), "prism lab matmul - 1 thread - float32"));
}
