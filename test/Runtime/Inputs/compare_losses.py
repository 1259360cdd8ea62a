"""Compares the losses nnc-run --train prints ("step K loss X") with
reference losses, one per line of a file for steps 1, 2, ..., at a relative
tolerance; prints one line per step and exits 1 on any mismatch.

usage: compare_losses.py LOSSES_FILE RTOL < nnc-run output
"""

import re
import sys

expected = [float(line) for line in open(sys.argv[1]) if line.strip()]
rtol = float(sys.argv[2])
status = 0
for line in sys.stdin:
    match = re.fullmatch(r"step (\d+) loss (\S+)\n?", line)
    if not match:
        continue
    step, loss = int(match.group(1)), float(match.group(2))
    reference = expected[step - 1]
    ok = abs(loss - reference) <= rtol * abs(reference)
    print("step %d: %s" % (step, "ok" if ok else "got %r, expected %r" % (loss, reference)))
    status |= not ok
sys.exit(status)
