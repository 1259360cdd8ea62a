"""Compares the runtime's Cast between numbers and strings with NumPy.

Usage: strings_numpy.py NNC_RUNTIME_TESTS [--count N]

Feeds `nnc-runtime-tests --strings-io` (which runs strings_module.so's
format and parse functions through a session, so through the hooks compiled
code calls) f32 and f64 values of random bit patterns, subnormals, powers of
ten and their neighbours around the switch between positional and scientific
notation (1e-4, 1e16), integers and specials, and integers of every width.
Each formatted value must equal NumPy's str() of it, and reading that text
back must give the same bits (any NaN for NaN). Prints one line per kind and
"strings-numpy: N values, M mismatches"; exits 1 on any mismatch.
"""

import argparse
import subprocess
import sys

import numpy as np

F32, F64 = 1, 11
INTEGERS = {
    3: np.int8,
    2: np.uint8,
    5: np.int16,
    4: np.uint16,
    6: np.int32,
    12: np.uint32,
    7: np.int64,
    13: np.uint64,
}


def neighbours(values, dtype, steps=3):
    """values and the `steps` representable values on each side of each."""
    out = []
    for v in values:
        v = dtype(v)
        up = down = v
        out.append(v)
        for _ in range(steps):
            up = np.nextafter(up, dtype(np.inf))
            down = np.nextafter(down, dtype(-np.inf))
            out += [up, down]
    return out


def float_values(dtype, bits_type, count, rng):
    info = np.finfo(dtype)
    values = list(rng.integers(0, np.iinfo(bits_type).max, size=count, dtype=bits_type,
                               endpoint=True).view(dtype))
    # Subnormals: random mantissas with a zero exponent.
    mantissa_bits = info.nmant
    values += list(rng.integers(1, 2**mantissa_bits, size=count // 10, dtype=bits_type)
                   .view(dtype))
    powers = [10.0**e for e in range(int(np.log10(info.tiny)) - 8, int(np.log10(info.max)) + 1)]
    values += neighbours(powers, dtype, steps=2)
    values += neighbours([1e-4, 1e16, 1e-5, 1e15, 0.0001, 9.999e15], dtype, steps=6)
    values += [dtype(v) for v in (0.1, 0.2, 0.3, 0.5, 1.0, 1.5, 100.0, 123456789.0, 2.0**24 + 1,
                                  2.0**53 + 1, 9007199254740993.0, 1.0 / 3, 2.0 / 3, np.pi,
                                  3.4028235e38)]
    values += [info.max, info.tiny, info.smallest_subnormal, -info.max, dtype(0.0),
               dtype(-0.0), dtype(np.inf), dtype(-np.inf), dtype(np.nan), -dtype(np.nan)]
    # Integers in floating point, positional up to 1e16.
    values += list(rng.integers(-(2**62), 2**62, size=count // 10).astype(dtype))
    return [dtype(v) for v in values]


def bits_hex(value):
    return "%x" % int(np.asarray(value).view(np.uint32 if value.dtype == np.float32 else np.uint64))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runtime_tests")
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    rng = np.random.default_rng(20261129)

    # (kind, line sent, check(result) -> None or a description of the mismatch)
    cases = []

    def add_float(dtype_code, value):
        expected = str(value)
        bits = bits_hex(value)
        cases.append(("format " + np.dtype(value.dtype).name,
                      f"format {dtype_code} {bits}",
                      lambda got, e=expected: None if got == e else f"expected '{e}'"))
        want_nan = bool(np.isnan(value))
        width = 32 if value.dtype == np.float32 else 64

        def check_parse(got, bits=bits, want_nan=want_nan, width=width):
            if got.startswith("error"):
                return "expected bits " + bits
            if want_nan:
                read = np.array([int(got, 16)], dtype=np.uint32 if width == 32 else np.uint64)
                return None if np.isnan(read.view(np.float32 if width == 32 else np.float64)[0]) \
                    else "expected a NaN"
            return None if got == bits else "expected bits " + bits

        cases.append(("parse " + np.dtype(value.dtype).name, f"parse {dtype_code} {expected}",
                      check_parse))

    for value in float_values(np.float32, np.uint32, args.count, rng):
        add_float(F32, value)
    for value in float_values(np.float64, np.uint64, args.count, rng):
        add_float(F64, value)
    # f32 read from 9 significant digits, f64 from 17 (Python's float() is
    # correctly rounded, and these texts are never near a halfway point of
    # float32, where NumPy's read through a double could round twice).
    for value in rng.integers(0, 2**32 - 1, size=args.count // 4, dtype=np.uint32).view(np.float32):
        if np.isfinite(value):
            text = "%.9g" % float(value)
            cases.append(("parse f32 %.9g", f"parse {F32} {text}",
                          lambda got, b=bits_hex(value): None if got == b else "expected bits " + b))
    for value in rng.integers(0, 2**64 - 1, size=args.count // 4, dtype=np.uint64).view(np.float64):
        if np.isfinite(value):
            text = "%.17g" % float(value)
            expected = bits_hex(np.float64(float(text)))
            cases.append(("parse f64 %.17g", f"parse {F64} {text}",
                          lambda got, b=expected: None if got == b else "expected bits " + b))

    for code, dtype in INTEGERS.items():
        info = np.iinfo(dtype)
        values = list(rng.integers(info.min, info.max, size=args.count // 20, dtype=dtype,
                                   endpoint=True))
        values += [dtype(v) for v in (info.min, info.max, 0, 1)]
        for value in values:
            bits = "%x" % (int(value) & 0xFFFFFFFFFFFFFFFF & ((1 << (8 * np.dtype(dtype).itemsize)) - 1))
            expected = str(value)
            name = np.dtype(dtype).name
            cases.append(("format " + name, f"format {code} {bits}",
                          lambda got, e=expected: None if got == e else f"expected '{e}'"))
            cases.append(("parse " + name, f"parse {code} {expected}",
                          lambda got, b=bits: None if got == b else "expected bits " + b))

    feed = "".join(line + "\n" for _, line, _ in cases)
    done = subprocess.run([args.runtime_tests, "--strings-io"], input=feed, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        print("strings-numpy: nnc-runtime-tests --strings-io failed")
        return 1
    results = done.stdout.split("\n")[:-1]
    if len(results) != len(cases):
        print(f"strings-numpy: {len(cases)} lines sent, {len(results)} results")
        return 1
    mismatches, counts = 0, {}
    for (kind, line, check), got in zip(cases, results):
        counts[kind] = counts.get(kind, 0) + 1
        problem = check(got)
        if problem:
            mismatches += 1
            if mismatches <= 20:
                print(f"MISMATCH {line!r}: got '{got}', {problem}")
    for kind in sorted(counts):
        print(f"{kind}: {counts[kind]} values")
    print(f"strings-numpy: {len(cases)} values, {mismatches} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
