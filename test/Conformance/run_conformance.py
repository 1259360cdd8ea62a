#!/usr/bin/python3
"""Runs ONNX's backend tests through nnc and nnc-run, and checks the results.

The suites are the folders of ONNX's test data (Debian's libonnx-testdata):
`node` (one op per test), `pytorch-converted` and `pytorch-operator` (PyTorch
modules and operators exported at opset 6, which nnc upgrades on import) and
`simple` (small graphs). A node test goes by its folder name, a test of the
other suites by `suite/name`.

Each test directory holds a model.onnx and test_data_set_*/ with input_N.pb and
output_N.pb. A test passes when `nnc model.onnx -o model.so` compiles it and
`nnc-run model.so --test-data DIR` matches every data set within ONNX's own
default tolerances (rtol 1e-3, atol 1e-7; integers exactly), and nnc-run's
second run of each data set leaves the inputs unchanged and repeats the outputs
bit for bit.

expected.txt lists every test that does not pass, with its reason. The run
fails when a listed test passes or an unlisted one fails, so the list stays
true; `--update` rewrites it (keeping the reasons already written) together
with the generated report docs/conformance.md.

Compiled modules are cached under --cache, keyed by the model and the nnc
binary, so a rerun recompiles only what changed.
"""

import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import onnx

RTOL, ATOL = "1e-3", "1e-7"
REPEAT_OK = "repeat run: outputs identical, inputs unchanged"
COMPILE_TIMEOUT, RUN_TIMEOUT = 300, 120


def op_of(test_dir):
    """The ONNX op a test exercises (expanded tests name it in their values)."""
    model = onnx.load(str(test_dir / "model.onnx"), load_external_data=False)
    ops = [n.op_type for n in model.graph.node]
    if test_dir.name.endswith("_expanded"):
        for node in model.graph.node:
            for out in node.output:
                m = re.match(r"([A-Z][A-Za-z0-9]*)_test_", out)
                if m:
                    return m.group(1) + " (expanded)"
    significant = [o for o in ops if o != "Constant"] or ops
    return significant[-1] if significant else "?"


# Diagnostics whose cause is the same: a shape that only a run-time input fixes.
RUNTIME_SHAPE = "needs dynamic shapes: a shape or shape parameter is a run-time input"


def first_error(text):
    """The first diagnostic, without paths and node names, as a reason."""
    for line in text.splitlines():
        if "error:" in line:
            reason = re.sub(r"\s+", " ", line.split("error:", 1)[1].strip())
            if any(k in reason for k in ("dynamic shape", "dynamic dims", "must be a constant", "static length")):
                return RUNTIME_SHAPE + " (" + reason.split(":")[0] + ")"
            return reason
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no diagnostic"


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")
# The device each target's modules run on here: CUDA kernels on the host's
# emulated GPU, since no GPU is assumed.
DEVICE = {"cpu": "cpu", "cuda": "cuda-emulated"}


def test_key(test_dir):
    """The name a test goes by in expected.txt and the report."""
    suite = test_dir.parent.name
    return test_dir.name if suite == "node" else f"{suite}/{test_dir.name}"


def run_test(test_dir, nnc, nnc_run, cache, compiler_key, target):
    """Returns (status, detail) with status pass, compile or mismatch."""
    name = test_key(test_dir).replace("/", "--")
    so = cache / (name + ".so")
    key_file = cache / (name + ".key")
    key = f"{compiler_key}{target}:" + file_digest(test_dir / "model.onnx")
    cached_error = cache / (name + ".error")
    if key_file.exists() and key_file.read_text() == key:
        if cached_error.exists():
            return "compile", first_error(cached_error.read_text())
    else:
        for stale in (so, cached_error, key_file):
            stale.unlink(missing_ok=True)
        try:
            r = subprocess.run([nnc, str(test_dir / "model.onnx"), f"-target={target}", "-o", str(so)],
                               capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
            failed, text = r.returncode != 0, r.stderr
            if failed and r.returncode < 0:
                text = f"nnc crashed (signal {-r.returncode}): " + first_error(r.stderr)
        except subprocess.TimeoutExpired:
            failed, text = True, f"error: compile timed out after {COMPILE_TIMEOUT} s"
        if failed:
            cached_error.write_text(text)
            key_file.write_text(key)
            return "compile", first_error(text)
        key_file.write_text(key)
    for data in sorted(test_dir.glob("test_data_set_*")):
        try:
            r = subprocess.run([nnc_run, str(so), f"--device={DEVICE[target]}", "--test-data", str(data), "--rtol", RTOL,
                                "--atol", ATOL], capture_output=True, text=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return "mismatch", f"run timed out after {RUN_TIMEOUT} s"
        if r.returncode != 0:
            bad = [l for l in (r.stdout + r.stderr).splitlines() if "FAIL" in l or "error" in l]
            detail = bad[0] if bad else f"nnc-run exit code {r.returncode}"
            detail = re.sub(r"'/[^']*/", "'", detail)  # no absolute paths in the list
            if r.returncode < 0:
                detail = f"crashed (signal {-r.returncode})"
            return "mismatch", f"{data.name}: {detail.strip()}"
        # nnc-run checks every run twice; a pass must show that it did.
        if REPEAT_OK not in r.stdout:
            return "mismatch", f"{data.name}: nnc-run did not report its repeat-run check"
    return "pass", ""


def read_expected(path):
    expected = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, reason = line.partition(":")
                expected[name.strip()] = reason.strip()
    return expected


def write_expected(path, results, old):
    lines = ["# ONNX backend tests that nnc does not pass, with the reason.",
             "# Generated by run_conformance.py --update; edit the reasons freely:",
             "# an entry's reason is kept as long as the test keeps failing.", ""]
    for name in sorted(results):
        status, detail = results[name]
        if status != "pass":
            lines.append(f"{name}: {old.get(name) or detail}")
    path.write_text("\n".join(lines) + "\n")


def write_report(path, results, ops, expected, target, other=None):
    """The markdown report; `other` (another target's expected list) adds its
    pass counts as a column, so the two targets read side by side."""
    reason = lambda n: (expected.get(n) or results[n][1]).replace("|", "\\|")
    node = {n: r for n, r in results.items() if "/" not in n}
    others = defaultdict(list)
    for n in results:
        if "/" in n:
            others[n.split("/")[0]].append(n)
    passed = lambda names: sum(1 for n in names if results[n][0] == "pass")
    cpu_passed = lambda names: sum(1 for n in names if n not in other)
    extra = lambda names: f" {cpu_passed(names)} |" if other is not None else ""
    head = " passed on cpu |" if other is not None else ""
    rule = "---:|" if other is not None else ""
    where = f"`-target={target}`" + (" run on `cuda-emulated`" if target == "cuda" else "")
    lines = [f"# ONNX conformance ({target.upper() if target == 'cuda' else 'CPU'})", "",
             "Generated by `test/Conformance/run_conformance.py --update` from ONNX 1.12's",
             "backend test data (Debian's libonnx-testdata); do not edit by hand.", "",
             f"**{passed(node)} of {len(node)} node tests pass** on {where} "
             f"(tolerances rtol {RTOL}, atol {ATOL})" +
             (f"; {cpu_passed(node)} pass on `-target=cpu`." if other is not None else "."), "",
             "| suite | tests | passed |" + head, "|---|---:|---:|" + rule,
             f"| node (one op each) | {len(node)} | {passed(node)} |" + extra(node)]
    for suite in sorted(others):
        lines.append(f"| {suite} | {len(others[suite])} | {passed(others[suite])} |" + extra(others[suite]))
    lines += ["", "The models of `pytorch-converted` and `pytorch-operator` import opset 6; nnc",
              "upgrades them to opset 7 with ONNX's version converter on import.", ""]
    failing = sorted(n for suite in others.values() for n in suite if results[n][0] != "pass")
    if failing:
        lines += ["Tests of these suites that fail:", "", "| test | why |", "|---|---|"]
        lines += [f"| {n} | {reason(n)} |" for n in failing]
        lines.append("")
    lines += ["Node tests by op:", "",
              "| op | tests | passed |" + head + " why the others fail |",
              "|---|---:|---:|" + rule + "---|"]
    by_op = defaultdict(list)
    for name in node:
        by_op[ops[name]].append(name)
    for op in sorted(by_op, key=str.lower):
        tests = by_op[op]
        why = "; ".join(sorted({reason(n) for n in tests if results[n][0] != "pass"}))
        lines.append(f"| {op} | {len(tests)} | {passed(tests)} |" + extra(tests) + f" {why} |")
    path.write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nnc", required=True)
    ap.add_argument("--nnc-run", required=True)
    ap.add_argument("--data", type=Path, default=Path("/usr/share/libonnx-testdata/data"),
                    help="ONNX's test data: the folder holding the suites' folders")
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--expected", type=Path, required=True)
    ap.add_argument("--target", choices=sorted(DEVICE), default="cpu",
                    help="compile for this target (cuda runs on cuda-emulated)")
    ap.add_argument("--report", type=Path, help="write the per-op table (markdown) here")
    ap.add_argument("--compare", type=Path, metavar="EXPECTED",
                    help="another target's expected list: the report counts its passes beside this run's")
    ap.add_argument("--update", action="store_true", help="rewrite --expected from this run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--filter", help="only tests whose name contains this")
    args = ap.parse_args()

    if not all((args.data / suite).is_dir() for suite in SUITES):
        sys.exit(f"run_conformance: no test data at {args.data}/{{{','.join(SUITES)}}} "
                 "(install libonnx-testdata)")
    args.cache.mkdir(parents=True, exist_ok=True)
    nnc_stat = os.stat(args.nnc)
    compiler_key = f"{nnc_stat.st_size}:{nnc_stat.st_mtime_ns}:"
    tests = sorted(d for suite in SUITES for d in (args.data / suite).iterdir()
                   if (d / "model.onnx").exists())
    if args.filter:
        tests = [t for t in tests if args.filter in test_key(t)]

    start = time.time()
    results, ops = {}, {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_test, t, args.nnc, args.nnc_run, args.cache, compiler_key,
                               args.target): t
                   for t in tests}
        for i, future in enumerate(concurrent.futures.as_completed(futures), 1):
            t = futures[future]
            results[test_key(t)] = future.result()
            ops[test_key(t)] = op_of(t)
            if i % 100 == 0:
                print(f"run_conformance: {i}/{len(tests)} tests, {time.time() - start:.0f} s", flush=True)

    expected = read_expected(args.expected)
    if args.update:
        write_expected(args.expected, results, expected)
        expected = read_expected(args.expected)
    if args.report:
        other = read_expected(args.compare) if args.compare else None
        write_report(args.report, results, ops, expected, args.target, other)

    passed = sum(1 for s, _ in results.values() if s == "pass")
    failed = len(results) - passed
    # Only the full run can judge the list; a filtered run checks its subset.
    newly_passing = sorted(n for n, (s, _) in results.items() if s == "pass" and n in expected)
    newly_failing = sorted(n for n, (s, _) in results.items() if s != "pass" and n not in expected)
    for n in newly_failing:
        print(f"UNEXPECTED FAILURE {n}: {results[n][0]}: {results[n][1]}")
    for n in newly_passing:
        print(f"UNEXPECTED PASS {n} (listed in {args.expected.name} as: {expected[n]})")
    groups = defaultdict(int)
    for n, (s, d) in results.items():
        if s != "pass":
            reason = re.sub(r" \(domain '[^']*', opset \d+\)", "", expected.get(n) or d)
            groups[re.sub(r" \(.*", "", reason)[:80]] += 1
    print("largest failure groups:")
    for reason, count in sorted(groups.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {count:4d}  {reason}")
    print(f"ONNX backend tests on {args.target} in {time.time() - start:.0f} s: {passed} passed, "
          f"{failed} failed (all {failed} listed in {args.expected.name})" if not newly_failing else
          f"ONNX backend tests on {args.target}: {passed} passed, {failed} failed")
    sys.exit(1 if newly_passing or newly_failing else 0)


if __name__ == "__main__":
    main()
