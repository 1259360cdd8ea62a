"""Training step time: nnc against PyTorch, on the CPU or a CUDA GPU.

usage: bench/train_bench.py [--models mlp_b64,resnet18_b8,transformer_b8,gpt_block_b8]
                            [--steps N] [--threads T] [--rounds R]
       bench/train_bench.py --cuda-bundle OUT [--models ...]   (here)
       OUT/train_bench.py --device cuda [--steps N]            (on the GPU machine)

For each model (the bench models of gen_models.py, at the batch in the name),
it exports the inference graph (batch norms kept), compiles it with
`nnc --train` (SGD with momentum 0.9; cross-entropy on random labels for
models that output logits, MSE against a random target for the others), and
times one training step (forward, loss, backward, update) of nnc (`nnc-run
--train --steps N`, which reports the median step after the first) and of
PyTorch (the same model in train() mode, torch.optim.SGD, the median over N
steps after three warm-up steps), both at T threads, in alternating fresh
processes for R rounds. Prints a Markdown table of the medians over rounds and
the ratio nnc/PyTorch (below 1: nnc is faster), and their geometric mean.

PyTorch runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (they are for
other tools on this machine and slow OpenBLAS's kernel choice down); nnc's
environment is left as it is.

On a GPU machine, which cannot build nnc: `--cuda-bundle OUT` compiles the
training modules with -target=cuda into OUT, beside their batches, this
script, gen_models.py, nnc-run and the libraries it links. There, `python3
OUT/train_bench.py --device cuda` times nnc-run --device=cuda against PyTorch
eager on the GPU (TF32 off, synchronized after each step), and compares the
losses of the first steps (same weights, same batch): the largest relative
difference is printed per model.
"""

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import torch
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).parent))
import gen_models  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / "build"))
OUT = BUILD / "benchmarks" / "training"
# In a bundle (--cuda-bundle) nnc-run and its libraries lie beside this script.
BUNDLED = (Path(__file__).resolve().parent / "nnc-run").exists()
NNC_RUN = (Path(__file__).resolve().parent / "nnc-run" if BUNDLED
           else BUILD / "bin" / "nnc-run")

# name -> (gen_models model, batch, classes of the random labels)
MODELS = {
    "mlp_b64": ("mlp_b64", 64),
    "resnet18_b8": ("resnet18", 8),
    "transformer_b8": ("transformer_encoder", 8),
    "gpt_block_b8": ("gpt_block", 8),
    "resnet18_b32": ("resnet18", 32),
}
DEFAULT_MODELS = "mlp_b64,resnet18_b8,transformer_b8,gpt_block_b8"
LR, MOMENTUM = 0.01, 0.9


def prepare(name):
    """Exports the model at its batch and writes a batch of inputs and labels."""
    base, batch = MODELS[name]
    model, x = gen_models.build(base)
    x = x.expand(batch, *x.shape[1:]).contiguous() + 0.01 * torch.arange(batch).view(
        batch, *([1] * (x.dim() - 1)))
    directory = OUT / name
    data = directory / "data"
    data.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), str(directory / "model.onnx"), opset_version=17,
                          input_names=["input"], output_names=["output"],
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
        out = model(x)
    # Logits N x C get class labels and cross-entropy; other outputs (the
    # encoder's and the GPT block's activations) a target of their shape and MSE.
    rng = np.random.default_rng(0)
    if out.dim() == 2:
        labels = rng.integers(0, out.shape[1], batch)
    else:
        labels = rng.standard_normal(tuple(out.shape)).astype(np.float32)
    for i, (array, tensor_name) in enumerate(((x.numpy(), "input"), (labels, "labels"))):
        (data / ("input_%d.pb" % i)).write_bytes(
            numpy_helper.from_array(np.array(array), tensor_name).SerializeToString())
    return directory, "cross-entropy" if out.dim() == 2 else "mse"


def compile_nnc(name, directory, loss, target="cpu"):
    model = directory / "model.onnx"
    cmd = [str(BUILD / "bin" / "nnc"), str(model), "-target=" + target, "--train",
           "--loss=" + loss, "--optimizer=sgd", "--lr=%g" % LR, "--momentum=%g" % MOMENTUM,
           "-o", str(directory / "train.so")]
    subprocess.run(cmd, check=True)


def run_nnc(directory, steps, threads, device="cpu"):
    """Median step time in ms and the losses of the steps."""
    out = subprocess.run([str(NNC_RUN), str(directory / "train.so"), "--train",
                          str(directory / "data"), "--steps", str(steps + 1), "--threads",
                          str(threads), "--device", device],
                         check=True, capture_output=True, text=True).stdout
    losses = [float(v) for v in re.findall(r"^step \d+ loss (\S+)", out, re.M)]
    return float(re.search(r"step time: median ([0-9.]+) ms", out).group(1)), losses


def time_nnc(directory, steps, threads):
    return run_nnc(directory, steps, threads)[0]


PEER = r"""
import sys, time, torch
sys.path.insert(0, sys.argv[1])
import gen_models
from onnx import load_tensor, numpy_helper
torch.set_num_threads(int(sys.argv[3]))
base, directory, steps, device = sys.argv[2], sys.argv[4], int(sys.argv[5]), sys.argv[9]
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
model, _ = gen_models.build(base)
model = model.to(device).train()
# The exported graph has no Dropout (exported in eval mode), so nnc trains
# without it: PyTorch's must compute the same function.
for m in model.modules():
    if isinstance(m, torch.nn.Dropout):
        m.p = 0.0
x = torch.from_numpy(numpy_helper.to_array(load_tensor(directory + "/data/input_0.pb")).copy())
y = torch.from_numpy(numpy_helper.to_array(load_tensor(directory + "/data/input_1.pb")).copy())
x, y = x.to(device), y.to(device)
opt = torch.optim.SGD(model.parameters(), lr=float(sys.argv[6]), momentum=float(sys.argv[7]))
loss_fn = (torch.nn.functional.cross_entropy if sys.argv[8] == "cross-entropy"
           else torch.nn.functional.mse_loss)
sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
times, losses = [], []
for i in range(steps + 3):
    sync()
    start = time.perf_counter()
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    sync()
    times.append((time.perf_counter() - start) * 1e3)
    losses.append(loss.item())
times = sorted(times[3:])  # warm-up: OpenBLAS's threads, the allocator's caches
print("losses", *losses)
print(times[len(times) // 2])
"""


def run_torch(name, directory, steps, threads, loss, device="cpu"):
    """Median step time in ms and the losses of the steps."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    out = subprocess.run([sys.executable, "-c", PEER, str(Path(__file__).parent), MODELS[name][0],
                          str(threads), str(directory), str(steps), str(LR), str(MOMENTUM),
                          loss, device],
                         check=True, capture_output=True, text=True, env=env).stdout
    lines = out.strip().splitlines()
    return float(lines[-1]), [float(v) for v in lines[-2].split()[1:]]


def time_torch(name, directory, steps, threads, loss):
    return run_torch(name, directory, steps, threads, loss)[0]


def cuda_bundle(out, names):
    """Compiles the training modules for CUDA into OUT, with what runs them."""
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        print("%s: exporting and compiling for cuda" % name, file=sys.stderr)
        directory, loss = prepare(name)
        compile_nnc(name, directory, loss, "cuda")
        target = out / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(directory / "data", target / "data")
        shutil.copy(directory / "train.so", target / "train.so")
        (target / "loss.txt").write_text(loss)
    shutil.copy(BUILD / "bin" / "nnc-run", out / "nnc-run")
    shutil.copy(Path(__file__), out / "train_bench.py")
    shutil.copy(Path(__file__).parent / "gen_models.py", out / "gen_models.py")
    (out / "lib").mkdir(exist_ok=True)
    ldd = subprocess.run(["ldd", str(BUILD / "bin" / "nnc-run")], check=True,
                         capture_output=True, text=True).stdout
    for path in re.findall(r"=> (/\S+)", ldd):
        if re.search(r"libnnc_runtime|libprotobuf|libonnx_proto|libz\.", path):
            shutil.copy(path, out / "lib")


def cuda_run(names, steps):
    """On the GPU machine: nnc-run --device=cuda against PyTorch eager, per model."""
    here = Path(__file__).resolve().parent
    os.environ["LD_LIBRARY_PATH"] = ":".join(
        filter(None, [str(here / "lib"), os.environ.get("LD_LIBRARY_PATH")]))
    print("| model | nnc step (ms) | PyTorch eager step (ms) | nnc/PyTorch | loss rel. diff, %d steps |"
          % (steps + 1))
    print("|---|---|---|---|---|")
    ratios = []
    for name in names:
        directory = here / name
        if not directory.exists():
            continue
        loss = (directory / "loss.txt").read_text()
        ours, our_losses = run_nnc(directory, steps, 1, "cuda")
        theirs, their_losses = run_torch(name, directory, steps, 1, loss, "cuda")
        n = min(len(our_losses), len(their_losses))
        diff = max(abs(a - b) / max(abs(b), 1e-12)
                   for a, b in zip(our_losses[:n], their_losses[:n]))
        ratios.append(ours / theirs)
        print("| %s | %.3f | %.3f | %.2f | %.1e |" % (name, ours, theirs, ours / theirs, diff),
              flush=True)
        print("  nnc losses:     %s" % " ".join("%.6g" % v for v in our_losses[:5]))
        print("  PyTorch losses: %s" % " ".join("%.6g" % v for v in their_losses[:5]))
    if ratios:
        print("\ngeometric mean nnc/PyTorch: %.2f"
              % math.exp(sum(math.log(r) for r in ratios) / len(ratios)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cuda-bundle", metavar="OUT",
                    help="compile the models for CUDA into OUT, to run on a GPU machine")
    ap.add_argument("--device", default="cpu",
                    help="cuda: time the bundle this script is in (on the GPU machine)")
    args = ap.parse_args()
    if args.cuda_bundle:
        cuda_bundle(Path(args.cuda_bundle), args.models.split(","))
        return
    if args.device == "cuda":
        names = args.models.split(",") if "--models" in sys.argv else list(MODELS)
        cuda_run(names, args.steps)
        return
    rows, ratios = [], []
    for name in args.models.split(","):
        if name not in MODELS:
            raise SystemExit("unknown model '%s' (have: %s)" % (name, ", ".join(MODELS)))
        print("%s: exporting and compiling" % name, file=sys.stderr)
        directory, loss = prepare(name)
        compile_nnc(name, directory, loss)
        ours, theirs = [], []
        for r in range(args.rounds):
            first, second = (time_nnc, time_torch) if r % 2 == 0 else (time_torch, time_nnc)
            for fn in (first, second):
                if fn is time_nnc:
                    ours.append(time_nnc(directory, args.steps, args.threads))
                else:
                    theirs.append(time_torch(name, directory, args.steps, args.threads, loss))
            print("  round %d: nnc %.3f ms, PyTorch %.3f ms" % (r + 1, ours[-1], theirs[-1]),
                  file=sys.stderr)
        a, b = sorted(ours)[len(ours) // 2], sorted(theirs)[len(theirs) // 2]
        ratios.append(a / b)
        rows.append((name, a, b, a / b))
    print("| model | threads | nnc step (ms) | PyTorch step (ms) | nnc/PyTorch |")
    print("|---|---|---|---|---|")
    for name, a, b, ratio in rows:
        print("| %s | %d | %.3f | %.3f | %.2f |" % (name, args.threads, a, b, ratio))
    print("\ngeometric mean nnc/PyTorch: %.2f"
          % math.exp(sum(math.log(r) for r in ratios) / len(ratios)))


if __name__ == "__main__":
    main()
