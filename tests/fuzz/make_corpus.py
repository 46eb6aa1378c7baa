#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus, tests/fuzz/corpus/<target>/ (committed; rerun after a
change here: the files are byte-for-byte reproducible). A few valid and a few nearly-valid inputs
per target, each small. The input layouts are the fuzz targets' own (see each fuzz_*.cpp):
  safetensors  the file
  idx          a mode byte (odd: the target gzips the rest first), then the file
  text         a block-size byte, a split-fraction byte, then the text
  cli          the arguments, one per line
  checkpoint   the file (a character transformer's, or an int8 MLP 2-3-2's)
  results      the file (a bench, train, profile, compare or gate JSON result)
"""
import gzip
import json
import os
import re
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    assert len(data) <= 4096, (target, name, len(data))
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


# ---- safetensors ----------------------------------------------------------------------------


def safetensors(tensors, metadata=None, header_override=None, length_delta=0, data_cut=0):
    """tensors: [(name, dtype, shape, raw bytes)] -> a file as save_safetensors writes it."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = header_override if header_override is not None else json.dumps(header, separators=(",", ":"))
    text = text.encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    out = struct.pack("<Q", len(text) + length_delta) + text + data
    return out[: len(out) - data_cut] if data_cut else out


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def f64(*v):
    return struct.pack("<%dd" % len(v), *v)


def i64(*v):
    return struct.pack("<%dq" % len(v), *v)


linear = [("weight", "F32", [3, 2], f32(0.1, -0.2, 0.3, -0.4, 0.5, -0.6)),
          ("bias", "F32", [3], f32(0.0, 1.0, -1.0))]
write("safetensors", "valid_linear", safetensors(linear, {"format": "pt", "step": "42"}))
write("safetensors", "valid_linear_extra",
      safetensors(linear + [("extra", "I64", [2], i64(7, -7))]))
write("safetensors", "valid_mixed", safetensors([
    ("scalar", "F32", [], f32(3.5)),
    ("empty", "F64", [0, 4], b""),
    ("ids", "I64", [2, 2], i64(1, 2, 3, 4)),
    ("x.y.z", "F64", [1, 1, 1, 1, 2], f64(1e300, -0.0)),
]))
write("safetensors", "valid_empty_header", safetensors([]))
write("safetensors", "bad_header_length", safetensors(linear, length_delta=1000))
write("safetensors", "bad_truncated_data", safetensors(linear, data_cut=4))
write("safetensors", "bad_dtype_f16", safetensors([("h", "F16", [2], b"\0\0\0\0")]))
write("safetensors", "bad_offsets",
      safetensors([], header_override='{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}')
      + f32(1, 2))
write("safetensors", "bad_shape_huge", safetensors(
    [], header_override='{"w":{"dtype":"F32","shape":[4294967296,4294967296,0],'
                        '"data_offsets":[0,0]}}'))
write("safetensors", "bad_shape_negative", safetensors(
    [], header_override='{"w":{"dtype":"I64","shape":[-1],"data_offsets":[0,8]}}') + i64(5))
write("safetensors", "bad_too_many_dims", safetensors(
    [("w", "F32", [1] * 9, f32(1.0))]))
write("safetensors", "bad_metadata", safetensors(
    [], header_override='{"__metadata__":{"k":1}}'))
write("safetensors", "bad_not_object", safetensors([], header_override="[1,2,3]"))
write("safetensors", "bad_json", safetensors([], header_override='{"w":{"dtype":"F32",'))
write("safetensors", "bad_short", b"\x10\0\0\0")

# ---- checkpoint --------------------------------------------------------------------------------


def gpt_tensors(vocab, block, d, layers, seed=1):
    """The tensors of a tied GPT (nn/models/gpt.h), in its named_state order, small values."""
    def vals(n):
        return f32(*[((i * 7 + seed) % 13 - 6) / 40.0 for i in range(n)])
    ones = lambda n: f32(*([1.0] * n))
    t = [("wte.weight", "F32", [vocab, d], vals(vocab * d)),
         ("wpe.weight", "F32", [block, d], vals(block * d))]
    for l in range(layers):
        b = "blocks.%d." % l
        t += [(b + "ln1.weight", "F32", [d], ones(d)), (b + "ln1.bias", "F32", [d], vals(d)),
              (b + "attn.qkv.weight", "F32", [3 * d, d], vals(3 * d * d)),
              (b + "attn.qkv.bias", "F32", [3 * d], vals(3 * d)),
              (b + "attn.proj.weight", "F32", [d, d], vals(d * d)),
              (b + "attn.proj.bias", "F32", [d], vals(d)),
              (b + "ln2.weight", "F32", [d], ones(d)), (b + "ln2.bias", "F32", [d], vals(d)),
              (b + "mlp.0.weight", "F32", [4 * d, d], vals(4 * d * d)),
              (b + "mlp.0.bias", "F32", [4 * d], vals(4 * d)),
              (b + "mlp.2.weight", "F32", [d, 4 * d], vals(4 * d * d)),
              (b + "mlp.2.bias", "F32", [d], vals(d))]
    t += [("ln_f.weight", "F32", [d], ones(d)), ("ln_f.bias", "F32", [d], vals(d))]
    return t


def gpt_meta(vocab, block, d, heads, layers, tied="true", chars=None):
    chars = chars if chars is not None else bytes(range(97, 97 + vocab))
    return {"prism.model": "gpt", "prism.gpt.vocab": str(vocab), "prism.gpt.block_size": str(block),
            "prism.gpt.d_model": str(d), "prism.gpt.heads": str(heads),
            "prism.gpt.layers": str(layers), "prism.gpt.tied": tied,
            "prism.vocab.hex": chars.hex()}


tiny_gpt = gpt_tensors(4, 4, 4, 1)
write("checkpoint", "gpt_tiny", safetensors(tiny_gpt, gpt_meta(4, 4, 4, 2, 1)))
write("checkpoint", "gpt_tiny_one_head", safetensors(tiny_gpt, gpt_meta(4, 4, 4, 1, 1)))
write("checkpoint", "bad_gpt_layers_huge", safetensors(tiny_gpt, gpt_meta(4, 4, 4, 2, 10**9)))
write("checkpoint", "bad_gpt_layers_two", safetensors(tiny_gpt, gpt_meta(4, 4, 4, 2, 2)))
write("checkpoint", "bad_gpt_d_model", safetensors(tiny_gpt, gpt_meta(4, 4, 8, 2, 1)))
write("checkpoint", "bad_gpt_block", safetensors(tiny_gpt, gpt_meta(4, 10**9, 4, 2, 1)))
write("checkpoint", "bad_gpt_untied", safetensors(tiny_gpt, gpt_meta(4, 4, 4, 2, 1, "false")))
write("checkpoint", "bad_gpt_vocab_hex",
      safetensors(tiny_gpt, gpt_meta(4, 4, 4, 2, 1, chars=b"abca")))
write("checkpoint", "bad_gpt_heads", safetensors(tiny_gpt, gpt_meta(4, 4, 4, 3, 1)))


def int8_mlp(scale1=0.01, scale2=0.02, input1=0.5):
    """MLP 2-3-2 as save_quantized writes it: per layer weight_q I8, weight_scale, bias,
    input_scale F32."""
    i8 = lambda *v: struct.pack("<%db" % len(v), *v)
    return [("fc1.weight_q", "I8", [3, 2], i8(1, -2, 3, -4, 5, -6)),
            ("fc1.weight_scale", "F32", [3], f32(scale1, scale1, scale1)),
            ("fc1.bias", "F32", [3], f32(0.1, 0.0, -0.1)),
            ("fc1.input_scale", "F32", [1], f32(input1)),
            ("fc2.weight_q", "I8", [2, 3], i8(127, -127, 0, 1, 2, 3)),
            ("fc2.weight_scale", "F32", [2], f32(scale2, scale2)),
            ("fc2.bias", "F32", [2], f32(0.0, 0.5)),
            ("fc2.input_scale", "F32", [1], f32(0.25))]


int8_meta = {"prism.quantized": "int8", "prism.model": "mlp"}
write("checkpoint", "int8_mlp", safetensors(int8_mlp(), int8_meta))
write("checkpoint", "bad_int8_weight_scale_zero", safetensors(int8_mlp(scale1=0.0), int8_meta))
write("checkpoint", "bad_int8_weight_scale_negative",
      safetensors(int8_mlp(scale2=-1.0), int8_meta))
write("checkpoint", "bad_int8_input_scale", safetensors(int8_mlp(input1=-0.5), int8_meta))
write("checkpoint", "bad_int8_untagged", safetensors(int8_mlp(), {"prism.model": "mlp"}))

# ---- results ------------------------------------------------------------------------------------

fingerprint = {"cpu_model": "a CPU", "logical_cpus": 2, "physical_cores": 2, "simd": "avx512",
               "compiler": "GNU 12", "flags": "-O3", "build_type": "Release", "threads": 1,
               "version": "0.1", "git_commit": "abc", "device": "cpu"}
roles = {r: 0 for r in ["activation", "temporary", "parameter", "gradient", "optimizer", "data",
                        "kv_cache"]}
op_row = {"name": "matmul", "phase": "forward", "variant": "optimized", "grad_of": "",
          "calls": 1.0, "self_ns": 1000.0, "flops": 2048.0, "bytes": 1536.0, "allocs": 1.0,
          "alloc_bytes": 256.0}


def bench_result(peak=4096, flops=2048, samples=(1000.0, 1100.0, 1050.0)):
    return {"kind": "prism.bench", "schema": 1, "model": "mlp", "mode": "infer", "kernels": "",
            "fingerprint": fingerprint, "quality": {"probe_output": [0.5, -0.25], "train_losses": []},
            "batches": [{"batch": 4, "samples_ns": list(samples), "cold_ns": 2000.0,
                         "peak_rss_bytes": 1 << 20, "tracked_peak_bytes": peak,
                         "tracked_peak_by_role": dict(roles, parameter=max(peak, 0)),
                         "counters": {"flops": flops, "macs": flops // 2, "bytes": 1536,
                                      "allocs": 1, "alloc_bytes": 256},
                         "ops": [op_row]}]}


def train_result(window=(2, 3), peak=8192):
    ops = [dict(op_row, macs=1024, flops=2048, bytes=1536, allocs=1, alloc_bytes=256)]
    return {"ops": ops, "train": {"model": "mlp", "kernels": "", "fingerprint": fingerprint,
                                  "batch": 8, "step_samples_ms": [1.5, 1.25, 1.75],
                                  "profiled_steps": list(window), "test_loss": 0.5,
                                  "test_accuracy": 0.9, "peak_rss_bytes": 1 << 20,
                                  "tracked_peak_bytes": peak}}


def profile_result():
    """`prism train --profile --json` cut to what both readers need: meta, ops, memory, train."""
    op = dict(op_row, device="cpu", time_ns=1000, self_ns=1000, gpu_ns=-1, flops=2048, macs=1024,
              bytes=1536, calls=1, allocs=1, alloc_bytes=256, threads_min=1, threads_max=1)
    timeline = [{"t_ns": 10, "live_bytes": 4096, "device": "cpu", "roles": {"parameter": 4096},
                 "op": ""}]
    return {"meta": {"threads": 1}, "ops": [op],
            "memory": {"peak_live_bytes": {"cpu": 4096}, "samples": 1, "timeline": timeline},
            "train": train_result()["train"]}


compare_doc = {"change": "", "kind": "prism.compare", "mode": "infer", "model": "mlp",
               "report": "A (baseline): mlp infer\nB (candidate): mlp infer\n",
               "series": [{"batch": 4, "label": "batch 4", "median_ns_a": 1050.0,
                           "median_ns_b": 1000.0,
                           "movers": [{"calls_a": 1.0, "calls_b": 1.0, "grad_of": "",
                                       "name": "matmul", "phase": "forward", "self_ns_a": 1000.0,
                                       "self_ns_b": 950.0, "variant_a": "optimized",
                                       "variant_b": "optimized"}],
                           "p_value": 0.5, "ratio": 0.95, "ratio_ci": [0.9, 1.0],
                           "verdict": "no detectable change"}],
               "warnings": []}
gate_doc = {"base": "a.json", "cand": "b.json", "kind": "prism.gate", "passed": False,
            "checks": [{"detail": "1 ms -> 2 ms: +100.0%, limit +15%", "passed": False,
                        "series": "batch 4", "what": "p99 latency"},
                       {"detail": "4096 -> 4096 bytes", "passed": True, "series": "batch 4",
                        "what": "peak tracked memory"}]}

compact = lambda d: json.dumps(d, separators=(",", ":"))
write("results", "profile", compact(profile_result()))
write("results", "compare", compact(compare_doc))
write("results", "gate", compact(gate_doc))
write("results", "bench", compact(bench_result()))
write("results", "train", compact(train_result()))
write("results", "bench_unknown_peak", compact(bench_result(peak=-1)))
write("results", "bad_bench_negative_peak", compact(bench_result(peak=-5)))
write("results", "bad_bench_negative_flops", compact(bench_result(flops=-1000)))
write("results", "bad_bench_zero_sample", compact(bench_result(samples=(1000.0, 0.0))))
write("results", "bad_train_empty_window", compact(train_result(window=(3, 2))))
write("results", "bad_train_negative_peak", compact(train_result(peak=-7)))
write("results", "bad_truncated", compact(bench_result())[:200])
write("results", "bad_not_json", "{\"kind\": prism.bench}")
write("results", "bad_empty", "")
write("results", "bad_other_kind", compact({"kind": "prism.nothing", "batches": []}))

# ---- idx --------------------------------------------------------------------------------------


def idx(ndim, dims, data, magic=None):
    m = magic if magic is not None else bytes([0, 0, 8, ndim])
    return m + b"".join(struct.pack(">I", d) for d in dims) + bytes(data)


images = idx(3, [2, 3, 3], [i * 15 for i in range(18)])  # 18 pixels, 0 to 255
labels = idx(1, [5], [0, 9, 3, 255, 1])
RAW, GZIP_HERE = b"\x00", b"\x01"  # the mode byte: as is, or gzipped by the target
write("idx", "images_raw", RAW + images)
write("idx", "images_gzip_here", GZIP_HERE + images)
write("idx", "images_gz_file", RAW + gz(images))
write("idx", "labels_raw", RAW + labels)
write("idx", "labels_gzip_here", GZIP_HERE + labels)
write("idx", "labels_gz_file", RAW + gz(labels))
write("idx", "images_empty", RAW + idx(3, [0, 28, 28], []))
write("idx", "bad_magic", RAW + idx(3, [1, 2, 2], [1, 2, 3, 4], magic=b"\x00\x00\x0d\x03"))
write("idx", "bad_truncated", RAW + images[:-3])
write("idx", "bad_extra_bytes", GZIP_HERE + labels + b"\x07")
write("idx", "bad_huge_dims", GZIP_HERE + idx(3, [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF], [1]))
write("idx", "bad_gz_truncated", RAW + gz(images)[:-6])
corrupt = bytearray(gz(labels))
corrupt[12] ^= 0xFF
write("idx", "bad_gz_corrupt", RAW + bytes(corrupt))
write("idx", "bad_header_cut", RAW + images[:9])

# ---- text -------------------------------------------------------------------------------------

prose = ("The river ran low that summer, and the children walked its bed looking for the stones "
         "that sang when struck. Nobody believed them; the stones sang anyway.\n")
write("text", "prose_block8", bytes([7, 230]) + prose.encode())
write("text", "prose_block64", bytes([63, 128]) + (prose * 2).encode())
write("text", "utf8", bytes([3, 200]) + "naïve café — 東京, ünïcödé\n".encode())
write("text", "binary", bytes([1, 100]) + bytes(range(256)))
write("text", "repeated", bytes([0, 128]) + b"a" * 40)
write("text", "crlf", bytes([5, 128]) + b"line one\r\nline two\r\n\tend\r\n")
write("text", "bad_too_short", bytes([40, 128]) + b"short")
write("text", "bad_split_short", bytes([10, 255]) + b"0123456789abcdef")
write("text", "bad_empty", bytes([1, 1]))

# ---- cli --------------------------------------------------------------------------------------

cli = {
    "demo": ["demo", "--steps", "10", "--threads", "2", "--kernel", "matmul=naive", "--rows", "0"],
    "train_mlp": ["train", "mlp", "--epochs", "2", "--lr", "0.05", "--optimizer", "adamw",
                  "--schedule", "none", "--seed", "7", "--device", "cpu"],
    "train_transformer": ["train", "transformer", "--data", "text", "--block", "32", "--steps",
                          "100", "--batch", "16", "--profile", "--profile-steps", "5", "--json",
                          "out.json", "--save", "w.safetensors"],
    "summary": ["summary", "resnet18", "--input", "1x3x224x224", "--depth", "2"],
    "machine": ["machine", "--threads", "4", "--reps", "3", "--fma-ms", "1.5", "--stream-mib", "16"],
    "lab": ["lab", "matmul", "--sizes", "128x784x256:nt,512", "--variants", "naive,blocked",
            "--reps", "3", "--min-sample-ms", "0.5", "--no-peak"],
    "lab_list": ["lab", "--list", "--device", "cuda"],
    "bench": ["bench", "cnn", "--batch", "1,8,64", "--mode", "train", "--qps", "50,100.5",
              "--max-batch", "8", "--max-wait-ms", "2", "--slo-ms", "10", "--iters", "5"],
    "compare": ["compare", "mlp", "--a", "", "--b", "--kernel matmul=naive", "--rounds", "2",
                "--batch", "1,64", "--duration", "0.5"],
    "compare_files": ["compare", "a.json", "b.json", "--rows", "5"],
    "gate": ["gate", "base.json", "cand.json", "--exact", "flops,allocs", "--max-p99-increase",
             "20%", "--max-quality-drop", "0.5", "--verbose"],
    "gate_baselines": ["gate", "--baselines", "bench/baselines", "--update"],
    "version": ["--version"],
    "help": ["--help"],
    "help_train": ["train", "--help"],
    "ops": ["ops"],
    "bad_unknown_command": ["frobnicate"],
    "bad_number": ["train", "mlp", "--steps", "12abc"],
    "bad_range": ["demo", "--threads", "0"],
    "bad_member": ["bench", "mlp", "--device", "tpu"],
    "bad_negative_seed": ["lab", "matmul", "--seed", "-1"],
    "bad_missing_model": ["summary"],
    "bad_nan": ["machine", "--fma-ms", "nan"],
    "bad_three_inputs": ["compare", "a", "b", "c"],
}
for name, args in cli.items():
    write("cli", name, "\n".join(args) + "\n")
write("cli", "nul_separated", b"train\0cnn\0--batch\x0032\0--lr\x001e-3")
write("cli", "no_args", b"")


# ---- dictionaries (libFuzzer -dict=): tokens the mutator splices in ----------------------------

HERE = os.path.dirname(os.path.abspath(__file__))


def write_dict(name, tokens, comment):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("# %s\n# Written by make_corpus.py.\n" % comment)
        for t in tokens:
            f.write('"%s"\n' % t.replace("\\", "\\\\").replace('"', '\\"'))


# The flags are declared where the commands register (cli/cmd_*.cpp, cli/command.h), the shared
# ones in cli/options.cpp and cli/bench_options.cpp, --version in cli/parse.cpp.
CLI_DIR = os.path.join(HERE, "..", "..", "cli")
cli_sources = ""
for name in sorted(os.listdir(CLI_DIR)):
    if name.endswith(".cpp"):
        with open(os.path.join(CLI_DIR, name)) as f:
            cli_sources += f.read()
# Only what is declared as a flag: cmd_check.cpp also spells the flags of the programs it runs.
flags = sorted(set(re.findall(
    r'add_(?:option|flag|option_function<[^>]*>)\(\s*"(?:-[a-z],)?(--[a-z][a-z0-9-]*)"',
    cli_sources)))
commands = sorted(set(re.findall(r'\.name = "([a-z]+)"', cli_sources)))
values = ["cpu", "cuda", "sgd", "adam", "adamw", "cosine", "none", "infer", "train", "mlp", "cnn",
          "transformer", "resnet18", "gpt2-small", "fashion-mnist", "shapes", "spirals", "text",
          "matmul=naive", "1x3x224x224", "128x784x256:nt", "15%", "1e-3", "nan", "inf", "-1",
          "9223372036854775807", "18446744073709551616", "0x10", "--help", "-h"]
write_dict("cli.dict", commands + flags + values,
           "The prism command line: commands, every flag of cli/, typical values.")
write_dict("safetensors.dict",
           ['"dtype"', '"shape"', '"data_offsets"', '"__metadata__"', '"F32"', '"F64"', '"I64"',
            '"F16"', "[]", "[0,0]", "{}", "18446744073709551615", "9223372036854775808", "-0",
            "1e400", "\\u0000", "\\ud800"],
           "safetensors headers: keys, dtypes and edge-case numbers (nn/safetensors.h).")
