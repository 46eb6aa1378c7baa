// `prism quantize` and `prism bench --precision int8`: a trained mlp quantized end to end (sizes,
// accuracy of both, the int8 file), timed as int8, and the errors.
#include <fstream>
#include <limits>
#include <regex>

#include "cli_run.h"
#include "safetensors_edit.h"
#include "tests/test_util.h"

using namespace prism::cli_test;

namespace {

double match(const std::string& out, const std::regex& re) {
  std::smatch m;
  return std::regex_search(out, m, re) ? std::stod(m[1].str()) : -1;
}

const char* kQuick = "--duration 0.05 --warmup 1 --no-peak --batch 1,4";

}  // namespace

TEST_CASE("prism quantize: an mlp trained on spirals keeps its accuracy in int8") {
  TempDir dir;
  const RunResult t = run_prism(
      "train mlp --data spirals --steps 150 --threads 1 --save w.safetensors", dir.path());
  INFO(prism::testing::info_text(t.out, t.err));
  REQUIRE(t.code == 0);
  for (const char* method : {"minmax", "percentile"}) {
    const RunResult r =
        run_prism(std::string("quantize w.safetensors -o w8.safetensors --data spirals "
                              "--calibrate 2 --threads 1 --method ") +
                      method,
                  dir.path());
    INFO(prism::testing::info_text(method, r.out, r.err));
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "weights: fp32 "));
    const double fp = match(r.out, std::regex(R"(fp32 ([0-9.]+)%)"));
    const double q = match(r.out, std::regex(R"(int8 ([0-9.]+)% \(delta)"));
    CHECK(fp > 80);
    // 8 bits on a 2-input MLP: within 3 points of fp32 (the test set has 1000 points).
    CHECK(q > fp - 3);
    CHECK(fs::exists(dir / "w8.safetensors"));
    const std::string bytes = read_file(dir / "w8.safetensors");
    CHECK(contains(bytes, "\"prism.quantized\":\"int8\""));
    CHECK(contains(bytes, method));
  }
  // The saved int8 model, timed in place of the float one.
  const RunResult b = run_prism(std::string("bench mlp --data spirals --precision int8 --load "
                                            "w8.safetensors --threads 1 ") +
                                    kQuick,
                                dir.path());
  INFO(prism::testing::info_text(b.out, b.err));
  CHECK(b.code == 0);
  CHECK(contains(b.out, "precision int8 (loaded from w8.safetensors)"));
  // The trained float weights against their int8 twin in one compare: both sides loaded, so
  // the quality line measures what quantization moved (never 0: int8 rounds).
  const RunResult c = run_prism(
      "compare mlp --mode infer --data spirals --batch 4 --duration 0.05 --rounds 2 --no-peak "
      "--threads 1 --a \"--load w.safetensors\" --b \"--precision int8 --load w8.safetensors\"",
      dir.path());
  INFO(prism::testing::info_text(c.out, c.err));
  CHECK(c.code == 0);
  CHECK(contains(c.out, "outputs on fixed inputs"));
  CHECK_FALSE(contains(c.out, "0.00e+00 (absolute"));
  // An int8 file read as float weights: the missing float tensor is named.
  const RunResult f = run_prism("bench mlp --load w8.safetensors --no-peak", dir.path());
  CHECK(f.code == 1);
  CHECK(contains(f.err, "tensor 'fc1.weight': missing from the file"));
}

TEST_CASE("prism bench --precision int8 quantizes on the fly, and refuses training") {
  TempDir dir;
  const RunResult r =
      run_prism(std::string("bench mlp --precision int8 --threads 1 ") + kQuick, dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  CHECK(r.code == 0);
  CHECK(contains(r.out, "quantized on the fly"));
  CHECK(contains(r.out, "matmul_int8"));
  const RunResult t = run_prism("bench mlp --mode train --precision int8 --no-peak", dir.path());
  CHECK(t.code == 2);  // refused while the options are checked, before any work
  CHECK(contains(t.err, "int8 is for inference only"));
  const RunResult tr = run_prism("train mlp --precision int8", dir.path());
  CHECK(tr.code == 2);
  CHECK(contains(tr.err, "int8 is for inference only"));
  const RunResult l = run_prism("bench mlp --load x.safetensors --no-peak", dir.path());
  CHECK(l.code == 1);
  CHECK(contains(l.err, "x.safetensors"));
}

TEST_CASE("prism quantize: bad files, models, counts and outputs are clear errors") {
  TempDir dir;
  RunResult r = run_prism(
      "quantize missing.safetensors -o q.safetensors --model mlp "
      "--data spirals",
      dir.path());
  CHECK(r.code == 1);
  CHECK(contains(r.err, "missing.safetensors"));
  CHECK_FALSE(fs::exists(dir / "q.safetensors"));
  r = run_prism("quantize w.safetensors -o q.safetensors --calibrate 0", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--calibrate"));
  r = run_prism("quantize w.safetensors -o q.safetensors --method mean", dir.path());
  CHECK(r.code == 2);
  r = run_prism("quantize w.safetensors", dir.path());
  CHECK(r.code == 2);  // -o is required
  const RunResult t =
      run_prism("train mlp --data spirals --steps 2 --threads 1 --save w.safetensors", dir.path());
  REQUIRE(t.code == 0);
  // A checkpoint of another architecture.
  r = run_prism("quantize w.safetensors -o q.safetensors --model cnn --data shapes", dir.path());
  CHECK(r.code == 1);
  CHECK_FALSE(fs::exists(dir / "q.safetensors"));
  // An output that cannot be written: refused before any work, nothing left behind.
  r = run_prism("quantize w.safetensors -o no/such/dir/q.safetensors --data spirals", dir.path());
  CHECK(r.code == 1);
  CHECK(contains(r.err, "cannot write"));
  CHECK_FALSE(fs::exists(dir / "no"));
  // Not a safetensors file.
  std::ofstream(dir / "junk.safetensors") << "not a safetensors file";
  r = run_prism("quantize junk.safetensors -o q.safetensors --model mlp --data spirals",
                dir.path());
  CHECK(r.code == 1);
  CHECK(contains(r.err, "junk.safetensors"));
}

TEST_CASE("prism bench: an int8 file with a zero, negative or non-finite scale is refused") {
  TempDir dir;
  REQUIRE(
      run_prism("train mlp --data spirals --steps 2 --threads 1 --save w.st", dir.path()).code ==
      0);
  REQUIRE(run_prism("quantize w.st -o q.st --data spirals --calibrate 1 --threads 1", dir.path())
              .code == 0);
  const std::string bytes = read_file(dir / "q.st");
  const struct {
    const char* tensor;
    int64_t index;
    float value;
    const char* message;
  } edits[] = {
      {"fc1.weight_scale", 0, 0.0f, "fc1.weight_scale[0] must be finite and > 0, got 0"},
      {"fc2.weight_scale", 5, -1.0f, "fc2.weight_scale[5] must be finite and > 0, got -1"},
      {"fc3.weight_scale", 1, std::numeric_limits<float>::infinity(),
       "tensor 'fc3.weight_scale': 1 of its 3 values are not finite"},
      {"fc1.input_scale", 0, 0.0f, "the input scale must be finite and > 0, got 0"},
      {"fc2.input_scale", 0, -2.0f, "the input scale must be finite and > 0, got -2"},
  };
  // Finite but huge: every weight scale of the last layer at 3e38 sends the outputs past float32;
  // the bench stops before timing instead of writing a result of nulls.
  std::string huge = bytes;
  for (int64_t j = 0; j < 3; ++j) huge = with_f32(huge, "fc3.weight_scale", j, 3e38f);
  std::ofstream(dir / "huge.st", std::ios::binary) << huge;
  const RunResult h = run_prism(
      "bench mlp --data spirals --precision int8 --load huge.st --no-peak --batch 1 --json h.json",
      dir.path());
  CHECK(h.code == 1);
  CHECK_MESSAGE(contains(h.err, "the model's output on fixed inputs is not finite"), h.err);
  CHECK_FALSE(fs::exists(dir / "h.json"));
  for (const auto& e : edits) {
    CAPTURE(e.message);
    std::ofstream(dir / "edited.st", std::ios::binary)
        << with_f32(bytes, e.tensor, e.index, e.value);
    const RunResult r =
        run_prism("bench mlp --data spirals --precision int8 --load edited.st --no-peak --batch 1",
                  dir.path());
    CHECK(r.code == 1);
    CHECK_MESSAGE(contains(r.err, e.message), r.err);
  }
}
