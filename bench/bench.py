#!/usr/bin/python3
"""nnc against ONNX Runtime on the bench models; bench/run.sh sets up and calls it.

For every model: count its FLOPs (flops.py), compile it with nnc (timed), then
for each thread count time nnc (nnc-run) and ONNX Runtime (ort_bench.js) in
alternating order over several rounds, each peer a fresh process with warm-up
and many timed runs. A peer's latency is the median over rounds of its
per-round medians; its ratio is against the peer measured in the same run
(ARCHITECTURE.md section 7). nnc's FLOP rate is set against the FMA peak that
nnc-peak measures at the start. Prints a Markdown table and writes every
number, per round, to WORK/results.json.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import flops
from gen_models import SETS

HERE = Path(__file__).resolve().parent

# Presets: timed seconds per peer per round, and rounds. The default run,
# compiles included, takes about 7 minutes on 2 busy cores while nnc is scalar
# code (ResNet-18 alone: 1 to 1.5 s per run, at least --min-runs per round).
PRESETS = {"quick": (0.25, 2), "default": (1.5, 5), "long": (4.0, 8)}


class BenchError(Exception):
    """A step failed for one model; the bench goes on with the others."""


def run(cmd, ok_codes=(0,)):
    """Runs CMD; returns (exit code, stdout). Other exit codes than OK_CODES raise."""
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode not in ok_codes:
        message = (result.stderr or result.stdout).strip().splitlines()
        raise BenchError(f"{Path(str(cmd[0])).name} failed: "
                         f"{message[-1] if message else 'exit code ' + str(result.returncode)}")
    return result.returncode, result.stdout


def measure_peak(peak_tool, threads):
    """GFLOP/s of the FMA peak per thread count, and nnc-peak's summary line."""
    _, out = run([peak_tool, *threads])
    peak = {int(t): float(g) for t, g in re.findall(r"^threads (\d+): ([\d.]+) GFLOP/s", out, re.M)}
    return peak, out.splitlines()[0]


def measure_round_trip(peak_tool):
    """ns for a cache line between two cores and back (nnc-peak --round-trip)."""
    _, out = run([peak_tool, "--round-trip"])
    m = re.search(r"^round trip: ([\d.]+) ns$", out, re.M)
    if not m:
        raise BenchError(f"nnc-peak printed no round trip:\n{out}")
    return float(m[1])


def compile_model(nnc, model, so):
    start = time.perf_counter()
    run([nnc, model, "-o", so])
    return time.perf_counter() - start


UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def time_nnc(nnc_run, so, data, runs, warmup, threads):
    """(median ms, min ms, outputs within tolerance) from one nnc-run process.
    The tolerance is gen_models.py's, from the model's float32 conditioning."""
    atol = json.loads((Path(data).parent / "tolerance.json").read_text())["atol"]
    # Exit code 1: it ran, but an output is out of tolerance.
    code, out = run([nnc_run, so, "--test-data", data, "--atol", atol, "--bench", runs,
                     "--warmup", warmup, "--threads", threads], ok_codes=(0, 1))
    m = re.search(r"^bench: .* median ([\d.]+) (us|ms|s), min ([\d.]+) (us|ms|s)$", out, re.M)
    if not m:
        raise BenchError(f"nnc-run printed no bench line:\n{out}")
    return float(m[1]) * UNIT_MS[m[2]], float(m[3]) * UNIT_MS[m[4]], code == 0


def time_ort(model, data, runs, warmup, threads):
    """(median ms, min ms, ORT version) from one ort_bench.js process."""
    _, out = run(["node", HERE / "ort_bench.js", model, data, runs, warmup, threads])
    result = json.loads(out)
    return result["median_ms"], result["min_ms"], result["ort"]


def runs_for(seconds, latency_ms, args):
    """Timed runs filling SECONDS, within --min-runs..--max-runs; and the
    warm-up runs: --warmup, but at most a quarter of them (ResNet-18 on
    scalar code would spend most of the bench warming up)."""
    n = min(args.max_runs, max(args.min_runs, round(seconds * 1e3 / latency_ms)))
    return n, max(1, min(args.warmup, n // 4))


def bench_model(name, args, peak):
    """Every number of one model; raises BenchError when a step fails."""
    model_dir = args.models / name
    model, data = model_dir / "model.onnx", model_dir / "test_data_set_0"
    if not model.is_file():
        raise BenchError(f"{model} is missing")
    so = args.work / f"{name}.so"
    try:
        gflop = flops.count_flops(model) / 1e9
    except ValueError as e:
        raise BenchError(str(e)) from e
    row = {"model": name, "gflop": gflop,
           "compile_s": compile_model(args.bin / "nnc", model, so), "threads": {}}

    # Calibration: one short run of each peer sizes that peer's rounds.
    nnc_ms = time_nnc(args.bin / "nnc-run", so, data, 2, 1, args.threads[0])[0]
    ort_ms = time_ort(model, data, 5, 2, args.threads[0])[0]
    nnc_runs, nnc_warmup = runs_for(args.seconds, nnc_ms, args)
    ort_runs, ort_warmup = runs_for(args.seconds, ort_ms, args)

    for t in args.threads:
        rounds = []
        # Multi-thread latencies depend on how far apart the host placed the
        # cores, which can change within minutes: measured around the rounds.
        trips = [measure_round_trip(args.bin / "nnc-peak")] if t > 1 else []
        for r in range(args.rounds):
            # Alternate who goes first, so that neither always follows the other.
            result = {}
            for peer in (["nnc", "ort"] if r % 2 == 0 else ["ort", "nnc"]):
                if peer == "nnc":
                    median, best, ok = time_nnc(args.bin / "nnc-run", so, data, nnc_runs,
                                                nnc_warmup, t)
                    result["nnc"] = {"median_ms": median, "min_ms": best, "runs": nnc_runs,
                                     "within_tolerance": ok}
                else:
                    median, best, row["ort_version"] = time_ort(model, data, ort_runs,
                                                                ort_warmup, t)
                    result["ort"] = {"median_ms": median, "min_ms": best, "runs": ort_runs}
            rounds.append(result)
            print(f"  {name} threads {t} round {r + 1}/{args.rounds}: "
                  f"nnc {result['nnc']['median_ms']:.3f} ms, ORT {result['ort']['median_ms']:.3f} ms",
                  file=sys.stderr, flush=True)
        if t > 1:
            trips.append(measure_round_trip(args.bin / "nnc-peak"))
        nnc_median = statistics.median(x["nnc"]["median_ms"] for x in rounds)
        ort_median = statistics.median(x["ort"]["median_ms"] for x in rounds)
        gflops = row["gflop"] / (nnc_median * 1e-3)
        row["threads"][t] = {
            "nnc_ms": nnc_median, "ort_ms": ort_median, "ratio": nnc_median / ort_median,
            "nnc_gflops": gflops, "nnc_peak_share": gflops / peak[t],
            "nnc_within_tolerance": all(x["nnc"]["within_tolerance"] for x in rounds),
            "round_trip_ns": trips, "rounds": rounds,
        }
    return row


def print_table(rows, peak, peak_line, ort_version):
    print(f"\nFMA peak ({peak_line.removeprefix('nnc-peak: ')}): " +
          ", ".join(f"{peak[t]:.1f} GFLOP/s at {t} thread{'s' * (t > 1)}" for t in sorted(peak)))
    per_core = [peak[t] / t for t in peak]
    if min(per_core) < 0.75 * max(per_core):
        # FMA throughput scales with cores unless something else runs on them.
        print("warning: the peak per core drops by over a quarter with more threads: other "
              "work shares the CPUs, so multi-thread numbers are unreliable")
    print(f"ONNX Runtime {ort_version} (onnxruntime-node, CPU); "
          "latencies are medians over rounds of per-round medians\n")
    print("| model | GFLOP | threads | nnc ms | ORT ms | nnc/ORT | nnc GFLOP/s | % of peak | "
          "compile s | core trip ns |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    tolerance_note = False
    for row in rows:
        if "error" in row:
            print(f"| {row['model']} | | | failed: {row['error']} | | | | | | |")
            continue
        for t, x in row["threads"].items():
            mark = "" if x["nnc_within_tolerance"] else " *"
            tolerance_note |= bool(mark)
            print(f"| {row['model']} | {row['gflop']:.4g} | {t} | {x['nnc_ms']:.4g}{mark} | "
                  f"{x['ort_ms']:.4g} | {x['ratio']:.2f} | {x['nnc_gflops']:.2f} | "
                  f"{100 * x['nnc_peak_share']:.2f} | {row['compile_s']:.2f} | "
                  f"{'-'.join(f'{n:.0f}' for n in x['round_trip_ns'])} |")
    if tolerance_note:
        print("\n\\* nnc's outputs were out of tolerance against the test data (atol: 4x PyTorch's "
              "own float32 deviation from float64, at least 1e-5)")
    print("\ncore trip: a cache line's round trip between two cores (nnc-peak --round-trip) "
          "before and after the rounds; multi-thread latencies vary with it")

    ratios = {}
    for row in rows:
        for t, x in row.get("threads", {}).items():
            ratios.setdefault(t, []).append(x["ratio"])
    if ratios:
        print()
        for t, r in sorted(ratios.items()):
            print(f"geometric mean nnc/ORT at {t} thread{'s' * (t > 1)}: "
                  f"{statistics.geometric_mean(r):.2f} over {len(r)} model{'s' * (len(r) > 1)}")
        every = [x for r in ratios.values() for x in r]
        print(f"geometric mean nnc/ORT overall: {statistics.geometric_mean(every):.2f}")


def cpu_model():
    m = re.search(r"^model name\s*: (.*)$", Path("/proc/cpuinfo").read_text(), re.M)
    return m[1] if m else "?"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", type=Path, required=True, help="directory of nnc, nnc-run, nnc-peak")
    p.add_argument("--models", type=Path, required=True, help="gen_models.py's output directory")
    p.add_argument("--work", type=Path, required=True, help="compiled models and results.json")
    p.add_argument("--set", choices=SETS, default="bench",
                   help="gen_models.py's set: bench (default) or wide (other shapes, torchvision's classifiers)")
    p.add_argument("--only", help="comma-separated models (default: the whole --set)")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    preset = p.add_mutually_exclusive_group()
    preset.add_argument("--quick", dest="preset", action="store_const", const="quick",
                        help=f"{PRESETS['quick'][1]} rounds of about {PRESETS['quick'][0]} s per peer")
    preset.add_argument("--long", dest="preset", action="store_const", const="long",
                        help=f"{PRESETS['long'][1]} rounds of about {PRESETS['long'][0]} s per peer")
    p.add_argument("--rounds", type=int, help="rounds per model and thread count "
                   f"(default {PRESETS['default'][1]})")
    p.add_argument("--seconds", type=float, help="timed seconds per peer per round "
                   f"(default {PRESETS['default'][0]})")
    p.add_argument("--min-runs", type=int, default=5, help="timed runs per round, at least (5)")
    p.add_argument("--max-runs", type=int, default=2000, help="timed runs per round, at most (2000)")
    p.add_argument("--warmup", type=int, default=10, help="untimed runs per process, at most (10)")
    args = p.parse_args()
    seconds, rounds = PRESETS[args.preset or "default"]
    args.seconds = args.seconds or seconds
    args.rounds = args.rounds or rounds
    args.threads = [int(t) for t in args.threads.split(",")]
    args.only = args.only.split(",") if args.only else list(SETS[args.set])
    return args


def main():
    args = parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    peak, peak_line = measure_peak(args.bin / "nnc-peak", args.threads)
    print(peak_line, file=sys.stderr, flush=True)
    rows = []
    for name in args.only:
        print(f"{name}:", file=sys.stderr, flush=True)
        try:
            rows.append(bench_model(name, args, peak))
        except BenchError as e:
            print(f"  {name}: {e}", file=sys.stderr, flush=True)
            rows.append({"model": name, "error": str(e).splitlines()[0]})

    ort_version = next((r["ort_version"] for r in rows if "ort_version" in r), "?")
    print_table(rows, peak, peak_line, ort_version)
    elapsed = time.perf_counter() - start
    print(f"\nbench: {elapsed / 60:.1f} min, {args.rounds} rounds of about {args.seconds:g} s "
          f"per peer; every number in {args.work / 'results.json'}")
    (args.work / "results.json").write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu": cpu_model(), "cpus": os.cpu_count(),
        "peak_gflops": peak, "peak": peak_line, "ort_version": ort_version, "rounds": args.rounds, "seconds": args.seconds,
        "elapsed_s": elapsed, "models": rows}, indent=1) + "\n")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
