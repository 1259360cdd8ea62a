#!/usr/bin/env python3
"""Assembles every CUDA kernel of compiled models with ptxas.

The PTX is read from the `nnc.cuda_images` attribute of `nnc --emit=llvm-dialect`
output (one image per chip). ptxas runs with the strict gate's flags (no
spills, no local memory, warnings as errors) and its -v report is condensed
to one line per kernel: registers, shared memory, spills.

  scripts/ptxas-check.py model.mlir [...] [--ptxas PATH]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def mlir_string(text, start):
    """The MLIR string literal opening at text[start] ('"'), unescaped."""
    out = bytearray()
    i = start + 1
    while True:
        c = text[i]
        if c == '"':
            return out.decode("utf-8"), i + 1
        if c == "\\":
            nxt = text[i + 1]
            if nxt in '"\\':
                out += nxt.encode()
                i += 2
            elif nxt == "n":
                out += b"\n"
                i += 2
            elif nxt == "t":
                out += b"\t"
                i += 2
            else:
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
            continue
        out += c.encode()
        i += 1


def images(text):
    attr = text.find("nnc.cuda_images = {")
    if attr < 0:
        return {}
    result = {}
    pos = attr + len("nnc.cuda_images = {")
    while True:
        m = re.compile(r'\s*(\w+)\s*=\s*"').match(text, pos)
        if not m:
            return result
        ptx, pos = mlir_string(text, m.end() - 1)
        result[m.group(1)] = ptx
        if text[pos] == ",":
            pos += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--ptxas", default=os.path.join(
        os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "ptxas"))
    args = parser.parse_args()
    failed = False
    for path in args.files:
        with open(path) as f:
            found = images(f.read())
        if not found:
            print(f"{path}: no nnc.cuda_images")
            failed = True
        for chip, ptx in sorted(found.items()):
            with tempfile.NamedTemporaryFile("w", suffix=".ptx") as tmp:
                tmp.write(ptx)
                tmp.flush()
                run = subprocess.run(
                    [args.ptxas, f"-arch={chip}", "-v", "--warn-on-spills",
                     "--warn-on-local-memory-usage", "-Werror", tmp.name, "-o", os.devnull],
                    capture_output=True, text=True)
            report = run.stdout + run.stderr
            kernels = re.findall(r"Compiling entry function '(\w+)'", report)
            regs = [int(r) for r in re.findall(r"Used (\d+) registers", report)]
            smem = [int(s) for s in re.findall(r"(\d+) bytes smem", report)]
            spills = re.findall(r"(\d+) bytes spill stores", report)
            print(f"{path} {chip}: rc={run.returncode} kernels={len(kernels)} "
                  f"max-registers={max(regs, default=0)} max-smem={max(smem, default=0)} "
                  f"spilling={sum(1 for s in spills if int(s))}")
            if run.returncode:
                print(report[-3000:])
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
