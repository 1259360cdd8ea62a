"""Runs a command, echoes its stderr then stdout, and prints its exit code, so
that a lit test can FileCheck the exact code (`not` only inverts it).

usage: exit-code.py COMMAND [ARGS...]
"""

import subprocess
import sys

result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(result.stderr)
sys.stdout.write(result.stdout)
print("exit code %d" % result.returncode)
