"""Compares the loss lines nnc-run --train printed with PyTorch's.

usage: compare_curve.py EXPECTED ACTUAL [--rtol R]

Both files hold lines "step K loss X"; other lines in ACTUAL are ignored.
Every expected step must be present with |x - expected| <= rtol * |expected|
(+1e-6). Prints the worst relative difference; exits 1 on a mismatch.
"""

import re
import sys


def read(path):
    steps = {}
    with open(path) as f:
        for line in f:
            m = re.fullmatch(r"step (\d+) loss (\S+)", line.strip())
            if m:
                steps[int(m.group(1))] = float(m.group(2))
    return steps


def main():
    args = sys.argv[1:]
    rtol = 1e-4
    if "--rtol" in args:
        i = args.index("--rtol")
        rtol = float(args[i + 1])
        del args[i:i + 2]
    expected, actual = read(args[0]), read(args[1])
    worst, bad = 0.0, []
    for step, want in sorted(expected.items()):
        got = actual.get(step)
        if got is None:
            bad.append("step %d missing" % step)
            continue
        diff = abs(got - want)
        worst = max(worst, diff / max(abs(want), 1e-12))
        if not diff <= rtol * abs(want) + 1e-6:
            bad.append("step %d: loss %.9g, PyTorch %.9g" % (step, got, want))
    print("%d steps, worst relative difference %.3g" % (len(expected), worst))
    for line in bad:
        print("MISMATCH " + line)
    sys.exit(1 if bad or not expected else 0)


if __name__ == "__main__":
    main()
