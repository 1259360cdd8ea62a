"""One session of the NonZero model of data_dependent_models.py run on new
data each time: every run reports the count its data gives, within the
buffers sized once for the bound, against numpy.

    data_dependent_session.py MODULE.so
"""

import sys

import numpy as np

import nnc

session = nnc.Session(nnc.Module(sys.argv[1]))
rng = np.random.default_rng(1)
for trial in range(6):
    x = (rng.standard_normal((3, 4)) * (rng.random((3, 4)) < trial / 6)).astype(np.float32)
    y, t = session.run([x])
    reference = np.array(np.nonzero(x), dtype=np.int64).reshape(2, -1)
    same = np.array_equal(y, reference) and np.array_equal(t, reference.T + 1)
    print(f"run {trial}: {y.shape[1]} nonzero, {'matches' if same else 'DIFFERS FROM'} numpy")

# Its dims unknown before the run, such an output cannot be bound.
try:
    session.run([x], [np.empty((2, 12), np.int64), None])
    print("bound: ran")
except Exception as error:
    print("bound:", str(error).splitlines()[0])
