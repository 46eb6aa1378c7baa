#!/usr/bin/python3
"""Side-by-side training-step times: prism vs PyTorch (Debian's python3-torch), same machine.

Both run the same models on the same batch shapes with 1 thread, interleaved round by round so
machine drift hits both alike; each round's figure is a median over its steps, and we report
the median and min-max of the rounds, and the ratio of medians.

  MLP 784-256-256-10, batch 128, SGD momentum 0.9       (prism: `prism train mlp`)
  CNN conv 1->16 3x3, relu, maxpool 2, conv 16->32 3x3,
      relu, maxpool 2, linear 800->10, batch 64, SGD     (prism: `prism train cnn`)

A step is forward, cross-entropy, backward, optimizer step, zero_grad, and reading the loss
and the number of correct predictions (what `prism train` does for its progress line).

Usage: /usr/bin/python3 bench/compare_pytorch.py  (Debian's Python, where python3-torch lives)
       [--prism build/prism] [--rounds 5] [--steps 60]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def torch_round(model_name, steps, warmup=10):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    if model_name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256),
                              nn.ReLU(), nn.Linear(256, 10))
        batch = 128
    else:
        model = nn.Sequential(nn.Conv2d(1, 16, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3),
                              nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(800, 10))
        batch = 64
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.rand(batch, 1, 28, 28)
    y = torch.randint(0, 10, (batch,))
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter_ns()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        _ = loss.item(), (logits.argmax(1) == y).sum().item()
        if i >= warmup:
            times.append((time.perf_counter_ns() - t0) / 1e6)
    return statistics.median(times)


def prism_round(binary, model_name, steps, warmup=10):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "p.json")
        # The profiled window is the last 2 steps, so recording does not touch the timed ones
        # we read: step_ms covers every step; we drop the warm-up ones below.
        cmd = [binary, "train", model_name, "--data", "shapes", "--steps", str(warmup + steps),
               "--threads", "1", "--json", out, "--profile-steps", "1"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, OMP_NUM_THREADS="1"))
        with open(out) as f:
            return json.load(f)["train"]["step_ms"]["median"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prism", default="build/prism")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed (apt-get install python3-torch); nothing to compare")
        return 0
    torch.set_num_threads(1)
    print(f"PyTorch {torch.__version__}, 1 thread; prism {args.prism}; {args.rounds} rounds x {args.steps} steps")
    for model_name in ("mlp", "cnn"):
        p, t = [], []
        for _ in range(args.rounds):
            p.append(prism_round(args.prism, model_name, args.steps))
            t.append(torch_round(model_name, args.steps))
        pm, tm = statistics.median(p), statistics.median(t)
        print(f"{model_name}: prism {pm:.3f} ms (min {min(p):.3f}, max {max(p):.3f}) | "
              f"pytorch {tm:.3f} ms (min {min(t):.3f}, max {max(t):.3f}) | prism/pytorch = {pm / tm:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
