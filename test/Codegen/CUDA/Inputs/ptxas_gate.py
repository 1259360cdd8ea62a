"""The ptxas gate: every kernel of every listed model, compiled with
`nnc -target=cuda --emit=ptx`, must assemble with the CUDA toolkit's ptxas
for each chip without spills or local memory, within the registers and
shared memory the budget file allows.

usage: ptxas_gate.py --nnc NNC --ptxas PTXAS --models DIR --budget FILE --work DIR

The budget file names models as in DIR, or as <model>+train, +tf32, +bf16 or +f16:
the model compiled with --train or --precision=tf32, bf16 or f16.

The budget file lists, per model, the most registers and shared-memory bytes
any one kernel may use. Prints one line per model and chip (kernels, most
registers, most shared memory) and a summary; exits 1 on any failure.
"""

import argparse
import re
import json
import subprocess
import sys
from pathlib import Path

FLAGS = ["-v", "--warn-on-spills", "--warn-on-local-memory-usage", "-Werror"]


def read_budget(path):
    budget = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            model, registers, shared = line.split()
            budget[model] = (int(registers), int(shared))
    return budget


def kernel_usage(report):
    """(kernel, registers, shared bytes) from ptxas -v."""
    usage, kernel = [], None
    for line in report.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            kernel = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and kernel:
            shared = re.search(r"(\d+) bytes smem", line)
            usage.append((kernel, int(m.group(1)), int(shared.group(1)) if shared else 0))
            kernel = None
    return usage


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nnc", required=True)
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--models", required=True, type=Path)
    ap.add_argument("--budget", required=True)
    ap.add_argument("--work", required=True, type=Path)
    args = ap.parse_args()
    failures, checked = 0, 0
    for model, (max_registers, max_shared) in read_budget(args.budget).items():
        out = args.work / model
        # "<model>+train": the model's training functions (MSE, Adam), whose
        # backward kernels go through the same gate; "<model>+tf32" and
        # "+bf16", "+f16": its contractions on the tensor cores (--precision).
        name, _, variant = model.partition("+")
        extra = {"train": ["--train", "--loss=mse", "--optimizer=adam"],
                 "tf32": ["--precision=tf32"], "bf16": ["--precision=bf16"],
                 "f16": ["--precision=f16"]}.get(variant, [])
        r = subprocess.run([args.nnc, str(args.models / name / "model.onnx"), "-target=cuda",
                            *extra, "--emit=ptx", "-o", str(out), "--report=json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {model}: nnc exited {r.returncode}: {r.stderr.strip()}")
            failures += 1
            continue
        # The shared memory nnc --report gives each launch's kernel.
        reported = {k["launch"]: k["static_shared_bytes"] + k["dynamic_shared_bytes"]
                    for k in json.loads(r.stdout)["kernels"] if "launch" in k}
        for ptx in sorted(out.glob("*.ptx")):
            chip = ptx.stem
            r = subprocess.run([args.ptxas, f"-arch={chip}", *FLAGS, str(ptx), "-o", "/dev/null"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {model} {chip}: ptxas: {(r.stderr or r.stdout).strip()[:2000]}")
                failures += 1
                continue
            usage = kernel_usage(r.stdout + r.stderr)
            if not usage:
                print(f"FAIL {model} {chip}: ptxas reported no kernels")
                failures += 1
                continue
            checked += len(usage)
            registers = max(u[1] for u in usage)
            shared = max(u[2] for u in usage)
            over = [u for u in usage if u[1] > max_registers or u[2] > max_shared]
            status = "ok" if not over else "FAIL"
            print(f"{status} {model} {chip}: {len(usage)} kernels, at most {registers} registers "
                  f"(budget {max_registers}), {shared} bytes shared (budget {max_shared})")
            for kernel, regs, smem in over:
                print(f"  over budget: {kernel}: {regs} registers, {smem} bytes shared")
            failures += bool(over)
            # Kernels launched with reported shared memory must agree with
            # what ptxas allocates for them.
            wrong = [(k, smem, reported[k]) for k, _, smem in usage
                     if k in reported and reported[k] != smem]
            for kernel, smem, said in wrong:
                print(f"FAIL {model} {chip}: {kernel}: nnc --report says {said} bytes shared, "
                      f"ptxas {smem}")
            if not wrong and reported:
                print(f"ok {model} {chip}: --report's shared memory matches ptxas for "
                      f"{sum(1 for k, _, _ in usage if k in reported)} kernels")
            failures += bool(wrong)
    print(f"ptxas gate: {checked} kernels assembled, {failures} failures")
    sys.exit(1 if failures or not checked else 0)


if __name__ == "__main__":
    main()
