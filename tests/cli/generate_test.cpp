// `prism generate`: a character transformer saved by `prism train` continues a prompt with and
// without the KV cache (the same text at temperature 0, across a window slide), reports its
// latency and cache memory, and refuses bad files, prompts and flags before any work.
#include <fstream>
#include <string>

#include "cli_run.h"
#include "safetensors_edit.h"
#include "tests/test_util.h"

using namespace prism::cli_test;

namespace {

// A tiny trained model (gpt-char with a 32-token context, 3 steps: enough for a checkpoint).
void train_tiny(const TempDir& dir) {
  const RunResult r = run_prism(
      "train transformer --data text --steps 3 --batch 2 --block 32 --threads 1 --save m.st",
      dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.code == 0);
}

}  // namespace

TEST_CASE("prism generate: the same text with and without the cache, latency and cache memory") {
  TempDir dir;
  train_tiny(dir);
  // 40 tokens after a 4-character prompt in a 32-token context: the window slides.
  const RunResult r =
      run_prism("generate m.st --prompt 'the ' --tokens 40 --temperature 0 --compare --threads 1",
                dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "texts with and without the cache: identical"));
  CHECK(contains(r.out, "time to first token"));
  CHECK(contains(r.out, "per-token p99"));
  CHECK(contains(r.out, "tokens/s"));
  // 2 * layers 4 * batch 1 * heads 4 * context 32 * head_dim 32 * 4 bytes, from the tracker.
  CHECK(contains(r.out, "131072 (128.0 KiB)"));
  CHECK(contains(r.out, "slides by half"));
  // --no-cache alone: one column, no cache memory.
  const RunResult u =
      run_prism("generate m.st --prompt 'the ' --tokens 5 --temperature 0.5 --top-k 3 --no-cache",
                dir.path());
  INFO(prism::testing::info_text(u.out, u.err));
  REQUIRE(u.code == 0);
  CHECK(contains(u.out, "uncached"));
  CHECK(!contains(u.out, "cached  "));
}

TEST_CASE("prism train --rope saves a model without wpe, and generate runs it, cached or not") {
  TempDir dir;
  const RunResult t = run_prism(
      "train transformer --rope --data text --steps 3 --batch 2 --block 32 --threads 1 --profile "
      "--save m.st",
      dir.path());
  INFO(prism::testing::info_text(t.out, t.err));
  REQUIRE(t.code == 0);
  // gpt-char on text: wte 44 x 128 + 4 blocks + ln_f, and no wpe (32 x 128 = 4096 fewer).
  CHECK(contains(t.out, "training transformer (798976 parameters)"));
  CHECK(contains(t.out, "rope_backward  (rope.dx)"));  // the op, in the profile's table
  // The cache holds keys turned by their own positions; after the window slides they are
  // turned again from position 0, as the uncached run crops its context: the same text.
  const RunResult g =
      run_prism("generate m.st --prompt 'the ' --tokens 40 --temperature 0 --compare --threads 1",
                dir.path());
  INFO(prism::testing::info_text(g.out, g.err));
  REQUIRE(g.code == 0);
  CHECK(contains(g.out, "texts with and without the cache: identical"));
  // --rope is for the transformers: a usage error elsewhere, before any work.
  const RunResult mlp = run_prism("train mlp --rope --steps 1", dir.path());
  CHECK(mlp.code == 2);
  CHECK(contains(mlp.err, "--rope: rotary position embeddings are for the transformers, not mlp"));
}

TEST_CASE("prism generate: bad files, prompts and flags are clear errors") {
  TempDir dir;
  train_tiny(dir);
  const RunResult missing = run_prism("generate nosuch.st --prompt a", dir.path());
  CHECK(missing.code == 1);
  CHECK(contains(missing.err, "nosuch.st"));
  { std::ofstream(dir / "junk.st") << "not a safetensors file"; }
  const RunResult junk = run_prism("generate junk.st --prompt a", dir.path());
  CHECK(junk.code == 1);
  CHECK(contains(junk.err, "junk.st"));
  // A checkpoint of another model: no GPT metadata.
  REQUIRE(run_prism("train mlp --data spirals --steps 1 --save mlp.st", dir.path()).code == 0);
  const RunResult mlp = run_prism("generate mlp.st --prompt a", dir.path());
  CHECK(mlp.code == 1);
  CHECK(contains(mlp.err, "not a character transformer checkpoint"));
  // Metadata that describes another GPT than the tensors: each field checked against the
  // tensors before any model is built, so a layer count of 1e9 is refused at once, not after
  // allocating it (which took 120 s and 10.8 GB before).
  const std::string bytes = read_file(dir / "m.st");
  const struct {
    const char* key;
    const char* value;
    const char* message;
  } edits[] = {
      {"prism.gpt.layers", "3", "describes a GPT of 3 layers (40 tensors), but the file holds 52"},
      {"prism.gpt.layers", "1000", "describes a GPT of 1000 layers"},
      {"prism.gpt.layers", "1000000000", "describes a GPT of 1000000000 layers"},
      {"prism.gpt.d_model", "64",
       "tensor 'wte.weight': shape is [44,128] in the file, the module has [44,64]"},
      {"prism.gpt.d_model", "1000000000", "describes a GPT prism cannot build"},
      {"prism.gpt.block_size", "1000000000",
       "tensor 'wpe.weight': shape is [32,128] in the file, the module has [1000000000,128]"},
      {"prism.gpt.tied", "false", "(53 tensors), but the file holds 52"},
      {"prism.gpt.vocab", "1000000000", "characters but the model 1000000000 token ids"},
      {"prism.gpt.heads", "0", "not a positive whole number"},
  };
  for (const auto& e : edits) {
    const std::string edit = std::string(e.key) + " = " + e.value;
    CAPTURE(edit);
    std::ofstream(dir / "edited.st", std::ios::binary) << with_metadata(bytes, e.key, e.value);
    const RunResult r = run_prism("generate edited.st --prompt a --threads 1", dir.path());
    CHECK(r.code == 1);
    CHECK_MESSAGE(contains(r.err, e.message), r.err);
    CHECK(r.out.empty());
  }

  // Finite but absurd weights: a layer norm's weight of 3e38 sends the logits past float32. Both
  // ways of drawing stop at the first token, naming it, instead of printing newlines.
  std::string huge = bytes;
  for (int64_t j = 0; j < 128; ++j) huge = with_f32(huge, "ln_f.weight", j, 3e38f);  // d_model
  std::ofstream(dir / "huge.st", std::ios::binary) << huge;
  for (const std::string how : {"--temperature 0", "--temperature 0.8", "--no-cache --top-k 5"}) {
    CAPTURE(how);
    const RunResult r = run_prism(
        std::string("generate huge.st --prompt ab --tokens 5 --threads 1 ") + how, dir.path());
    CHECK(r.code == 1);
    CHECK_MESSAGE(contains(r.err, "generate: token 1 of 5"), r.err);
    CHECK(contains(r.err, "the logits are not finite"));
  }

  const RunResult bad_char = run_prism("generate m.st --prompt \"a$(printf '\\001')\"", dir.path());
  CHECK(bad_char.code == 2);
  CHECK(contains(bad_char.err, "byte 0x01 at position 1 is not in the model's vocabulary"));
  CHECK(run_prism("generate m.st --prompt a --tokens 0", dir.path()).code == 2);
  CHECK(run_prism("generate m.st --prompt a --tokens 100001", dir.path()).code == 2);
  CHECK(run_prism("generate m.st --prompt a --temperature -1", dir.path()).code == 2);
  const RunResult block = run_prism("generate m.st --prompt a --block 33", dir.path());
  CHECK(block.code == 2);
  CHECK(contains(block.err, "exceeds the model's context 32"));
  CHECK(run_prism("generate m.st --prompt a --no-cache --compare", dir.path()).code == 2);
  CHECK(run_prism("generate m.st", dir.path()).code == 2);  // --prompt is required
}
