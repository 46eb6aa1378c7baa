// The kernel registry: which variant runs (Use > set_variant > PRISM_KERNELS > default), the
// errors a wrong name or a malformed spec gives, a learner's kernel registered from this file
// with PRISM_REGISTER_KERNEL, the float64 fallback of a float32-only kernel, and the profile's
// variant column naming the kernel that actually ran.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/ops/elementwise/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/gradcheck.h"
#include "tensor/ops.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

using prism::testing::contains;
using prism::testing::error_of;
using prism::testing::run_child;

// ---- a learner's kernels, registered the way the docs say ------------------------------------

namespace {

std::atomic<int> g_user_matmul_calls{0};

// Matmul, "ikj" loop order: the inner loop walks a row of B and a row of C, so a row-major B
// is read along cache lines. float32 only, like a first learner kernel.
void user_matmul_ikj(const prism::kernels::MatmulArgs<float>& a) {
  g_user_matmul_calls.fetch_add(1);
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m * a.n; ++i) C[i] = 0;
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t p = 0; p < a.k; ++p) {
        const float aip = A[i * a.a_rs + p * a.a_cs];
        for (int64_t j = 0; j < a.n; ++j) C[i * a.n + j] += aip * B[p * a.b_rs + j * a.b_cs];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, user_matmul_ikj);

// Mistakes a learner can make: both are reported at start-up and left out, rather than
// aborting the program during static initialisation. Registered quietly (recorded, not printed
// on stderr), so running this program, and listing its tests, prints no error that is none.
void user_kernel_for_missing_op(const prism::kernels::UnaryArgs<float>&) {}
PRISM_REGISTER_KERNEL_EXPECTING_ERROR(no_such_op_anywhere, user_kernel_for_missing_op);

void user_unary_for_matmul(const prism::kernels::UnaryArgs<float>&) {}
PRISM_REGISTER_KERNEL_EXPECTING_ERROR(matmul, user_unary_for_matmul);  // takes MatmulArgs

// For `--kernel OP=user`: sigmoid gets one user kernel (the tag picks it), tanh two (the tag
// alone cannot say which). They run the op's built-in naive loop, so the suites that check every
// variant of an op against its baseline still pass when the whole binary runs in one process.
// (matmul has user_matmul_ikj, but lab_test.cpp adds user-tagged "wrong_" matmuls at run time.)
void run_naive(const char* op, const prism::kernels::UnaryArgs<float>& a) {
  prism::kernels::registry()
      .at(op, prism::Device::cpu)
      .at("naive")
      .get<prism::kernels::UnaryArgs, float>()(a);
}
void my_sigmoid(const prism::kernels::UnaryArgs<float>& a) {
  run_naive("sigmoid", a);
}
void my_tanh(const prism::kernels::UnaryArgs<float>& a) {
  run_naive("tanh", a);
}
void my_other_tanh(const prism::kernels::UnaryArgs<float>& a) {
  run_naive("tanh", a);
}
PRISM_REGISTER_KERNEL(sigmoid, my_sigmoid);
PRISM_REGISTER_KERNEL(tanh, my_tanh);
PRISM_REGISTER_KERNEL(tanh, my_other_tanh);

}  // namespace

namespace prism::kernels {
namespace {

using profiler::OpRecord;

int index_of(const OpKernels& k, std::string_view name) {
  for (size_t i = 0; i < k.entries().size(); ++i) {
    if (k.entries()[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

OpKernels& mutable_op(const char* op) {
  return registry().op(op, Device::cpu);
}

// The variant an op call would record for dtype t, as run through the tensor front end.
std::string recorded_variant(const std::function<void()>& call, const char* op) {
  profiler::Session session;
  call();
  std::string v = "<no record>";
  for (const OpRecord& r : session.stop().recording.records) {
    if (std::string(r.op) == op && r.phase == profiler::Phase::forward) v = r.variant;
  }
  return v;
}

// Restores the process-wide choices of the ops a test touches, even when a CHECK fails.
struct RestoreChoices {
  std::vector<std::string> ops;
  ~RestoreChoices() {
    for (const auto& op : ops) set_variant(op, "");
  }
};

void f32_unary_canon(const UnaryArgs<float>&) {}

TEST_CASE("the built-in kernels are registered with their defaults") {
  const OpKernels& mm = registry().at("matmul", Device::cpu);
  REQUIRE(mm.find("naive"));
  REQUIRE(mm.find("reference"));
  CHECK(mm.find("naive")->tag == VariantTag::naive);
  CHECK(mm.find("reference")->tag == VariantTag::reference);
  CHECK(mm.default_entry().name == "optimized");  // faster than Eigen (docs/PERFORMANCE.md)
  CHECK_FALSE(std::string_view(mm.cost_formula()).empty());
  for (const char* op : {"max", "argmax"}) {
    CHECK(registry().at(op, Device::cpu).default_entry().name == "reference");
  }
  for (const char* op : {"sum", "mean"}) {
    CHECK(registry().at(op, Device::cpu).default_entry().name == "optimized");
  }
  // softmax: the fused two-pass kernel beats Eigen's 2x (docs/PERFORMANCE.md).
  for (const char* op : {"softmax", "log_softmax"}) {
    CHECK(registry().at(op, Device::cpu).default_entry().name == "online");
  }
  // Elementwise, copy, index and pooling: SIMD and chunks over the threads
  // (kernels/cpu/parallel.h).
  for (const char* op : {"add", "exp", "gelu_backward", "copy", "gather", "index_select",
                         "index_add", "max_pool2d_backward", "avg_pool2d"}) {
    CHECK(registry().at(op, Device::cpu).default_entry().name == "optimized");
  }
  // all() is sorted by op name.
  std::vector<const OpKernels*> all = registry().all();
  REQUIRE(all.size() > 10);
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1]->op() <= all[i]->op());
}

TEST_CASE("canonical names: every op answers to naive, and reference where it has one") {
  for (const OpKernels* k : registry().all()) {
    INFO(prism::testing::info_text(k->op(), " on ", std::string(device_name(k->device()))));
    const KernelEntry* naive = k->find("naive");
    REQUIRE_MESSAGE(naive, "every op has one naive-tagged variant (--kernel OP=naive)");
    CHECK(naive->tag == VariantTag::naive);
    if (const KernelEntry* ref = k->find("reference")) CHECK(ref->tag == VariantTag::reference);
  }
  // A variant named for its idea still answers to its tag, in every way a variant is chosen.
  const OpKernels& ce = registry().at("cross_entropy", Device::cpu);
  CHECK(ce.at("naive").name == "composed");
  {
    Use use("cross_entropy", "naive");
    CHECK(ce.select(DType::f32).name == "composed");
  }
  set_variant("adam_update", "naive");
  CHECK(registry().at("adam_update", Device::cpu).select(DType::f32).name == "per_tensor");
  set_variant("adam_update", "");
  // The alias is a lookup, not a name: registering a variant called "naive" is still allowed
  // where the naive-tagged one has another name (a private registry, so the global one is kept).
  Registry r;
  OpKernels& k = r.op("op2", Device::cpu);
  k.add<UnaryArgs>("composed", VariantTag::naive, "x", &f32_unary_canon);
  CHECK(k.at("naive").name == "composed");
  k.add<UnaryArgs>("naive", VariantTag::naive, "y", &f32_unary_canon);
  CHECK(k.at("naive").name == "naive");  // an exact name wins
  CHECK_FALSE(k.find("reference"));
}

TEST_CASE("PRISM_REGISTER_KERNEL adds a user variant from a test file") {
  const OpKernels& mm = registry().at("matmul", Device::cpu);
  const KernelEntry* e = mm.find("user_matmul_ikj");
  REQUIRE(e != nullptr);
  CHECK(e->tag == VariantTag::user);
  CHECK(e->has(DType::f32));
  CHECK_FALSE(e->has(DType::f64));
  CHECK(mm.default_entry().name == "optimized");  // registering does not change the default
  // The learner's mistakes were left out, not half-registered, and reported with the reason.
  CHECK(registry().find("no_such_op_anywhere", Device::cpu) == nullptr);
  CHECK(mm.find("user_unary_for_matmul") == nullptr);
  const std::vector<std::string> errors = registration_errors();
  auto reported = [&](const std::string& line) {
    return std::find(errors.begin(), errors.end(), line) != errors.end();
  };
  CHECK(
      reported("could not register kernel 'user_kernel_for_missing_op' for op "
               "'no_such_op_anywhere': no op named 'no_such_op_anywhere'"));
  CHECK(
      reported("could not register kernel 'user_unary_for_matmul' for op 'matmul': matmul: "
               "kernel 'user_unary_for_matmul' takes a different argument struct than the "
               "op's other kernels"));
}

TEST_CASE("'user' picks an op's one user kernel, and is an error naming the candidates otherwise") {
  RestoreChoices restore{{"sigmoid", "tanh", "relu"}};
  const OpKernels& sg = registry().at("sigmoid", Device::cpu);
  REQUIRE(sg.find("user"));
  CHECK(sg.find("user")->name == "my_sigmoid");
  CHECK(sg.at("user").name == "my_sigmoid");
  // Every way a variant is chosen: --kernel (apply_kernel_choices), set_variant, Use.
  apply_kernel_choices("sigmoid=user");
  CHECK(sg.chosen().name == "my_sigmoid");
  Tensor x = ones({2, 3});
  CHECK(recorded_variant([&] { sigmoid(x); }, "sigmoid") == "my_sigmoid");
  set_variant("sigmoid", "");
  CHECK(sg.chosen().name == sg.default_entry().name);
  set_variant("sigmoid", "user");
  CHECK(sg.chosen().name == "my_sigmoid");
  set_variant("sigmoid", "");
  {
    Use use("sigmoid", "user");
    CHECK(recorded_variant([&] { sigmoid(x); }, "sigmoid") == "my_sigmoid");
  }

  // Two user kernels: ambiguous, and the message names both so the learner can pick one.
  const OpKernels& th = registry().at("tanh", Device::cpu);
  CHECK(th.find("user") == nullptr);
  const std::string two = error_of([] { apply_kernel_choices("tanh=user"); });
  CHECK(contains(two, "'user' is ambiguous on cpu: 2 variants are tagged user"));
  CHECK(contains(two, "(my_tanh, my_other_tanh), name one"));
  CHECK(th.chosen().name == th.default_entry().name);  // nothing applied
  CHECK(contains(error_of([&] { (void)th.at("user"); }), "(my_tanh, my_other_tanh)"));
  CHECK(contains(error_of([] { Use("tanh", "user"); }), "ambiguous"));
  apply_kernel_choices("tanh=my_other_tanh");  // naming one still works
  CHECK(th.chosen().name == "my_other_tanh");

  // None: the message says no user kernel is registered, and lists what exists.
  const std::string none = error_of([] { set_variant("relu", "user"); });
  CHECK(contains(none, "relu: no kernel variant named 'user' on cpu (variants: naive"));
  CHECK(contains(none, "no user kernel is registered for relu"));
  CHECK(contains(none, "PRISM_REGISTER_KERNEL"));
  CHECK(contains(error_of([] { (void)registry().at("relu", Device::cpu).at("user"); }),
                 "no user kernel is registered for relu"));
}

TEST_CASE("a user kernel selected with Use runs, and its result is right") {
  ref::Rng rng(81);
  const int before = g_user_matmul_calls.load();
  ref::Input a = ref::make_input({2, 7, 13}, ref::Layout::transposed, DType::f32, rng);
  ref::Input b = ref::make_input({13, 5}, ref::Layout::stepped, DType::f32, rng);
  Tensor y;
  std::string variant;
  {
    Use use("matmul", "user_matmul_ikj");
    variant = recorded_variant([&] { y = matmul(a.t, b.t); }, "matmul");
  }
  CHECK(g_user_matmul_calls.load() > before);
  CHECK(variant == "user_matmul_ikj");
  ref::Array scale = ref::matmul(ref::abs(a.a), ref::abs(b.a));
  CHECK(ref::mismatch(y, ref::matmul(a.a, b.a), 1e-5, 1e-6, &scale) == "");
  // Outside the guard the default runs again.
  const int after = g_user_matmul_calls.load();
  CHECK(recorded_variant([&] { matmul(a.t, b.t); }, "matmul") ==
        registry().at("matmul", Device::cpu).default_entry().name);
  CHECK(g_user_matmul_calls.load() == after);
}

TEST_CASE("a float32-only user kernel falls back to the default for float64, and says so") {
  ref::Rng rng(82);
  ref::Input a = ref::make_input({4, 6}, ref::Layout::contiguous, DType::f64, rng);
  ref::Input b = ref::make_input({6, 3}, ref::Layout::contiguous, DType::f64, rng);
  Use use("matmul", "user_matmul_ikj");
  const OpKernels& mm = registry().at("matmul", Device::cpu);
  CHECK(mm.chosen().name == "user_matmul_ikj");  // what was asked for
  CHECK(mm.select(DType::f32).name == "user_matmul_ikj");
  CHECK(mm.select(DType::f64).name == mm.default_entry().name);  // what runs for float64
  const int before = g_user_matmul_calls.load();
  Tensor y;
  CHECK(recorded_variant([&] { y = matmul(a.t, b.t); }, "matmul") == mm.default_entry().name);
  CHECK(g_user_matmul_calls.load() == before);  // the user kernel did not run
  CHECK(ref::mismatch(y, ref::matmul(a.a, b.a), 1e-12, 1e-13) == "");
  // A gradient check in float64 therefore works while the learner's kernel is selected.
  Tensor x = ref::to_tensor(ref::random({3, 4}, rng), DType::f64);
  x.set_requires_grad();
  GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) { return matmul(in[0], b.t.slice(0, 0, 4)); }, {x});
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_CASE("priority: Use > set_variant > environment choice > default") {
  OpKernels& mm = mutable_op("matmul");
  RestoreChoices restore{{"matmul"}};
  const int naive = index_of(mm, "naive"), reference = index_of(mm, "reference");
  const int user = index_of(mm, "user_matmul_ikj");
  REQUIRE(naive >= 0);
  REQUIRE(reference >= 0);
  REQUIRE(user >= 0);
  // Whatever PRISM_KERNELS said for this process, put back afterwards.
  set_variant("matmul", "");
  const int env_before =
      mm.chosen().name == mm.default_entry().name ? -1 : index_of(mm, mm.chosen().name);

  mm.set_choice(-1, /*from_env=*/true);
  CHECK(mm.chosen().name == "optimized");   // 4. the default
  mm.set_choice(naive, /*from_env=*/true);  // as PRISM_KERNELS=matmul=naive would
  CHECK(mm.chosen().name == "naive");       // 3. beats the default
  set_variant("matmul", "reference");
  CHECK(mm.chosen().name == "reference");  // 2. beats the environment
  {
    Use use("matmul", "naive");
    CHECK(mm.chosen().name == "naive");  // 1. beats everything
    {
      Use inner("matmul", "user_matmul_ikj");
      CHECK(mm.chosen().name == "user_matmul_ikj");  // the innermost guard wins
      Use other_op("softmax", "naive");              // a guard for another op changes nothing here
      CHECK(mm.chosen().name == "user_matmul_ikj");
    }
    CHECK(mm.chosen().name == "naive");
    // The front end agrees with chosen(): the record names the scoped variant.
    Tensor a = ones({3, 4}), b = ones({4, 2});
    CHECK(recorded_variant([&] { matmul(a, b); }, "matmul") == "naive");
  }
  CHECK(mm.chosen().name == "reference");
  set_variant("matmul", "");
  CHECK(mm.chosen().name == "naive");  // back to the environment's choice
  mm.set_choice(-1, /*from_env=*/true);
  CHECK(mm.chosen().name == "optimized");

  // set_variant is seen by the front end too.
  set_variant("matmul", "naive");
  Tensor a = ones({3, 4}), b = ones({4, 2});
  CHECK(recorded_variant([&] { matmul(a, b); }, "matmul") == "naive");
  set_variant("matmul", "");
  CHECK(recorded_variant([&] { matmul(a, b); }, "matmul") == "optimized");

  mm.set_choice(env_before, /*from_env=*/true);
}

TEST_CASE("a Use guard is per thread") {
  const OpKernels& mm = registry().at("matmul", Device::cpu);
  Use use("matmul", "naive");
  std::string seen_elsewhere;
  std::thread t([&] { seen_elsewhere = mm.chosen().name; });
  t.join();
  CHECK(mm.chosen().name == "naive");
  CHECK(seen_elsewhere == mm.default_entry().name);
}

TEST_CASE("apply_kernel_choices parses op=variant lists") {
  RestoreChoices restore{{"matmul", "softmax", "sum"}};
  const OpKernels& mm = registry().at("matmul", Device::cpu);
  const OpKernels& sm = registry().at("softmax", Device::cpu);
  const OpKernels& su = registry().at("sum", Device::cpu);
  apply_kernel_choices("matmul=naive,softmax=naive");
  CHECK(mm.chosen().name == "naive");
  CHECK(sm.chosen().name == "naive");
  CHECK(su.chosen().name == "optimized");    // sum's default: not named, not changed
  apply_kernel_choices("matmul=reference");  // only the ops named change
  CHECK(mm.chosen().name == "reference");
  CHECK(sm.chosen().name == "naive");
  apply_kernel_choices("sum=naive,sum=reference");  // the last word wins
  CHECK(su.chosen().name == "reference");
  apply_kernel_choices(",matmul=naive,,");  // empty items are ignored
  CHECK(mm.chosen().name == "naive");
  apply_kernel_choices("");  // nothing to do
  CHECK(mm.chosen().name == "naive");
  apply_kernel_choices("matmul=user_matmul_ikj");
  CHECK(mm.chosen().name == "user_matmul_ikj");
}

TEST_CASE("malformed specs and unknown names are errors that list what exists") {
  RestoreChoices restore{{"matmul", "softmax"}};
  for (const char* bad :
       {"matmul", "=naive", "matmul=", "=", "matmul:naive", "softmax=naive,matmul"}) {
    INFO(std::string(bad));
    CHECK_THROWS_WITH_AS(apply_kernel_choices(bad), doctest::Contains("expected op=variant"),
                         Error);
  }
  CHECK_THROWS_WITH_AS(apply_kernel_choices("nosuchop=naive"), doctest::Contains("nosuchop"),
                       Error);
  try {
    apply_kernel_choices("nosuchop=naive");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find("matmul") != std::string::npos);  // the ops that exist
    CHECK(m.find("softmax") != std::string::npos);
  }
  try {
    apply_kernel_choices("matmul=fastest");
    FAIL("an unknown variant must throw");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find("fastest") != std::string::npos);
    CHECK(m.find("naive") != std::string::npos);  // the variants that exist
    CHECK(m.find("reference") != std::string::npos);
    CHECK(m.find("user_matmul_ikj") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(set_variant("matmul", "fastest"), doctest::Contains("naive"), Error);
  CHECK_THROWS_WITH_AS(set_variant("nosuchop", "naive"), doctest::Contains("matmul"), Error);
  CHECK_THROWS_WITH_AS(Use("matmul", "fastest"), doctest::Contains("reference"), Error);
  CHECK_THROWS_WITH_AS(Use("nosuchop", "naive"), doctest::Contains("softmax"), Error);
  CHECK_THROWS_AS(registry().at("nosuchop", Device::cpu), Error);
  CHECK_THROWS_AS(registry().at("matmul", Device::cpu).at("fastest"), Error);
}

TEST_CASE("a bad spec leaves nothing half-applied") {
  RestoreChoices restore{{"matmul", "softmax", "sum"}};
  const OpKernels& mm = registry().at("matmul", Device::cpu);
  const OpKernels& sm = registry().at("softmax", Device::cpu);
  const OpKernels& su = registry().at("sum", Device::cpu);
  set_variant("sum", "naive");
  for (const char* bad :
       {"softmax=naive,matmul=bogus", "softmax=naive,bogus=naive", "softmax=naive,matmul",
        "matmul=naive,softmax=naive,sum=reference,sum="}) {
    INFO(std::string(bad));
    CHECK_THROWS_AS(apply_kernel_choices(bad), Error);
    CHECK(mm.chosen().name == "optimized");
    CHECK(sm.chosen().name == "online");
    CHECK(su.chosen().name == "naive");  // an earlier choice survives a failed one
  }
  // A failed Use pushes nothing: the previous guard is still the one in force.
  {
    Use use("matmul", "naive");
    CHECK_THROWS_AS(Use("matmul", "bogus"), Error);
    CHECK(mm.chosen().name == "naive");
  }
  CHECK(mm.chosen().name == "optimized");
}

TEST_CASE("the profile's variant column names the kernel that ran, for every choice") {
  RestoreChoices restore{{"softmax", "sum"}};
  Tensor x = ones({3, 5}), x64 = ones({3, 5}, DType::f64);
  for (const char* v : {"naive", "reference"}) {
    INFO(std::string(v));
    {
      Use use("softmax", v);
      CHECK(recorded_variant([&] { softmax(x); }, "softmax") == v);
      CHECK(recorded_variant([&] { softmax(x64); }, "softmax") == v);
    }
    set_variant("sum", v);
    CHECK(recorded_variant([&] { sum(x); }, "sum") == v);
    set_variant("sum", "");
  }
  // Backward rows name their kernels too.
  Tensor w = ones({3, 5});
  w.set_requires_grad();
  Use use("softmax", "naive");
  profiler::Session session;
  softmax(w).backward(ones({3, 5}));
  bool saw_backward = false;
  for (const OpRecord& r : session.stop().recording.records) {
    if (std::string(r.op) == "softmax_backward") {
      saw_backward = true;
      CHECK(std::string(r.variant) == "naive");
      CHECK(r.phase == profiler::Phase::backward);
    }
  }
  CHECK(saw_backward);
}

// ---- a local registry: registration rules without touching the global one ----------------------

void f32_unary(const UnaryArgs<float>&) {}
void f64_unary(const UnaryArgs<double>&) {}
void f32_binary(const BinaryArgs<float>&) {}

TEST_CASE("registration rules on a private registry") {
  Registry r;
  OpKernels& k = r.op("op1", Device::cpu);
  CHECK(k.def() == nullptr);  // an op with no definition under kernels/ops/
  CHECK(std::string_view(k.cost_formula()).empty());
  CHECK_THROWS_AS(k.default_entry(), Error);  // nothing registered yet
  k.add<UnaryArgs>("naive", VariantTag::naive, "plain loop", &f32_unary, &f64_unary);
  k.add<UnaryArgs>("fast32", VariantTag::optimized, "float only", &f32_unary);
  CHECK_THROWS_WITH_AS(k.add<UnaryArgs>("naive", VariantTag::naive, "again", &f32_unary),
                       doctest::Contains("already registered"), Error);
  CHECK_THROWS_WITH_AS(k.add<BinaryArgs>("other", VariantTag::naive, "wrong args", &f32_binary),
                       doctest::Contains("argument struct"), Error);
  CHECK_THROWS_WITH_AS(k.add<UnaryArgs>("empty", VariantTag::naive, "no fn", nullptr),
                       doctest::Contains("no function"), Error);
  CHECK(k.entries().size() == 2);
  CHECK(k.default_entry().name == "naive");  // the first registered, until set_default
  k.set_default("fast32");
  CHECK(k.default_entry().name == "fast32");
  CHECK_THROWS_AS(k.set_default("bogus"), Error);
  // dtype fallback: the default lacks float64, so the first entry that has it runs.
  CHECK(k.select(DType::f32).name == "fast32");
  CHECK(k.select(DType::f64).name == "naive");
  CHECK_THROWS_WITH_AS(k.select(DType::i64), doctest::Contains("int64"), Error);
  // Typed access checks the argument family.
  // (Compared outside CHECK: doctest cannot print function pointers.)
  const bool f32_ok = k.at("naive").get<UnaryArgs, float>() == &f32_unary;
  const bool f64_ok = k.at("naive").get<UnaryArgs, double>() == &f64_unary;
  const bool missing_ok = k.at("fast32").get<UnaryArgs, double>() == nullptr;
  CHECK(f32_ok);
  CHECK(f64_ok);
  CHECK(missing_ok);
  CHECK_THROWS_AS((k.at("naive").get<BinaryArgs, float>()), Error);
  // Registry lookups.
  CHECK(&r.op("op1", Device::cpu) == &k);  // registered once
  CHECK(r.find("op1", Device::cuda) == nullptr);
  CHECK_THROWS_WITH_AS(r.at("op2", Device::cpu), doctest::Contains("op1"), Error);
  r.op("a_first", Device::cpu).add<UnaryArgs>("naive", VariantTag::naive, "", &f32_unary);
  REQUIRE(r.all().size() == 2);
  CHECK(r.all()[0]->op() == "a_first");
}

// ---- PRISM_KERNELS itself, read once per process: checked in a child process --------------------

TEST_CASE("child: PRISM_KERNELS choices") {
  const char* mode = std::getenv("PRISM_TEST_KERNELS_CHILD");
  if (!mode) return;  // only meaningful when started by the test below
  Tensor a = ones({3, 4}), b = ones({4, 2});
  if (std::string(mode) == "good") {
    // PRISM_KERNELS=matmul=naive,softmax=naive
    CHECK(recorded_variant([&] { matmul(a, b); }, "matmul") == "naive");
    CHECK(recorded_variant([&] { softmax(a); }, "softmax") == "naive");
    CHECK(recorded_variant([&] { sum(a); }, "sum") == "optimized");
    set_variant("matmul", "reference");  // --kernel beats the environment
    CHECK(recorded_variant([&] { matmul(a, b); }, "matmul") == "reference");
    {
      Use use("softmax", "reference");  // a scoped guard too
      CHECK(recorded_variant([&] { softmax(a); }, "softmax") == "reference");
    }
    set_variant("matmul", "");  // back to the environment's choice, not the default
    CHECK(recorded_variant([&] { matmul(a, b); }, "matmul") == "naive");
    std::printf("CHILD_DONE good\n");
  } else {
    // PRISM_KERNELS=matmul=bogus: the first op call reports it, naming the variable and what
    // exists, and so does every later one (the value is read once).
    CHECK_THROWS_WITH_AS(matmul(a, b), doctest::Contains("PRISM_KERNELS"), Error);
    CHECK_THROWS_WITH_AS(add(a, a), doctest::Contains("reference"), Error);
    std::printf("CHILD_DONE bad\n");
  }
}

TEST_CASE("PRISM_KERNELS is applied below set_variant and Use, and a bad value is an error") {
  auto [status, out] =
      run_child("PRISM_TEST_KERNELS_CHILD=good PRISM_KERNELS=matmul=naive,softmax=naive",
                "child: PRISM_KERNELS choices");
  INFO(out);
  CHECK(status == 0);
  CHECK(out.find("CHILD_DONE good") != std::string::npos);
  auto [status2, out2] = run_child("PRISM_TEST_KERNELS_CHILD=bad PRISM_KERNELS=matmul=bogus",
                                   "child: PRISM_KERNELS choices");
  INFO(out2);
  CHECK(status2 == 0);
  CHECK(out2.find("CHILD_DONE bad") != std::string::npos);
}

}  // namespace
}  // namespace prism::kernels
