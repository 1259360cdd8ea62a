#!/usr/bin/python3
"""PyTorch on a CUDA GPU, the peer of nnc's CUDA target: each bench model
(gen_models.py's definitions and weights) timed with CUDA-graph replay, at
f32 (TF32 off) and TF32, and its GPU output compared with the CPU reference.

usage: torch_cuda.py [--models a,b] [--runs N] [--batch B]

Prints one line per model and precision: median and minimum milliseconds
per replay (the graph alone; inputs already on the device), the median of a
replay with the input copied from host memory before it and the output
copied back after it (what nnc-run --device=cuda --bench times: a session's
run does both), and the largest difference from PyTorch's CPU result.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_models  # noqa: E402


def time_graph(model, x, runs, host_x):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(stream):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        y = model(x)
    for _ in range(10):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    copies = []
    for _ in range(runs):
        start = time.perf_counter()
        x.copy_(host_x)
        graph.replay()
        y.cpu()
        copies.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, min(times) * 1e3, statistics.median(copies) * 1e3, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated subset (default: all)")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--batch", type=int, default=0, help="batch size (default: the model's)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_cuda.py: no CUDA device")
    names = args.models.split(",") if args.models else list(gen_models.MODELS)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for name in names:
        model, x = gen_models.build(name)
        if args.batch:
            x = x[:1].repeat((args.batch,) + (1,) * (x.dim() - 1))
        with torch.no_grad():
            reference = model(x)
        model, xd = model.cuda(), x.cuda()
        for tf32 in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            median, best, copied, y = time_graph(model, xd, args.runs, x)
            err = (y.float().cpu() - reference).abs().max().item()
            print(f"{name:20s} batch {x.shape[0]:3d} {'tf32' if tf32 else 'f32 ':4s} "
                  f"median {median:8.4f} ms  min {best:8.4f} ms  with copies {copied:8.4f} ms  "
                  f"max |gpu - cpu| {err:.3g}")


if __name__ == "__main__":
    main()
