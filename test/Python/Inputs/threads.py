"""Two sessions of one module, run from two Python threads at once (runs
release the GIL), give bit for bit the results one session gives alone; so do
two threads sharing one session, whose runs take turns.

    threads.py OUT_DIR
"""

import os
import sys
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import expect, expect_close, mlp_forward, random_mlp, write_mlp  # noqa: E402

import nnc  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
# Large enough that a run's loops go parallel and the threads' runs overlap.
params = random_mlp(seed=9, inputs=64, hidden=256, outputs=32)
module = nnc.Module(nnc.compile(write_mlp(f"{out}/mlp.onnxtext", params, batch=16), f"{out}/mlp.so"))
runtime = nnc.Runtime(threads=2)

rng = np.random.default_rng(10)
batches = [rng.standard_normal((16, 64)).astype(np.float32) for _ in range(16)]
alone = nnc.Session(module, runtime=runtime)
expected = [alone.run([x])[0] for x in batches]
for x, y in zip(batches, expected):
    expect_close(y, mlp_forward(params, x)[0], "one session", rtol=1e-4, atol=1e-4)

ROUNDS = 25


def worker(session, order, results, errors):
    try:
        for _ in range(ROUNDS):
            for i in order:
                (y,) = session.run([batches[i]])
                results.append((i, y))
    except Exception as error:  # reported by the main thread
        errors.append(error)


def run_threads(sessions):
    orders = [list(range(len(batches))), list(reversed(range(len(batches))))]
    results = [[] for _ in sessions]
    errors = []
    threads = [
        threading.Thread(target=worker, args=(session, order, result, errors))
        for session, order, result in zip(sessions, orders, results)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expect(not errors, f"a thread failed: {errors}")
    for result in results:
        expect(len(result) == ROUNDS * len(batches), f"{len(result)} runs")
        for i, y in result:
            expect(np.array_equal(y, expected[i]), f"batch {i}: a threaded run differs from one session's")
    return sum(len(r) for r in results)


count = run_threads([nnc.Session(module, runtime=runtime), nnc.Session(module, runtime=runtime)])
print(f"two sessions, two threads: {count} runs identical to one session's")
# CHECK: two sessions, two threads: 800 runs identical to one session's
count = run_threads([alone, alone])
print(f"one session, two threads: {count} runs identical")
# CHECK: one session, two threads: 800 runs identical
print("PASS")
# CHECK: PASS
