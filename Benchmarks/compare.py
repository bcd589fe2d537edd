"""Runs cipher-bench and the native comparators (OpenSSL through PyPI `cryptography`, PyNaCl)
in the same run, and prints the ratio Swift / comparator for every operation both measure.

Usage: python compare.py PATH_TO_CIPHER_BENCH [--filter PREFIX]
Each module in comparators/ exposes `benchmarks()`, a list of (op_name, callable) pairs; a
callable performs one operation. Op names match cipher-bench's.
"""
import importlib
import json
import pathlib
import platform
import subprocess
import sys
import time

BATCHES = 11
ROUNDS = 5


def median_us(fn):
    # Pick a batch size that takes about 5 ms, as cipher-bench does.
    start = time.perf_counter_ns()
    fn()
    once = max(time.perf_counter_ns() - start, 1)
    iterations = max(1, int(5_000_000 / once))
    for _ in range(max(1, iterations // 4)):
        fn()
    samples = []
    for _ in range(BATCHES):
        start = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        samples.append((time.perf_counter_ns() - start) / 1000 / iterations)
    samples.sort()
    return samples[len(samples) // 2]


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    bench = sys.argv[1]
    prefix = sys.argv[sys.argv.index("--filter") + 1] if "--filter" in sys.argv else ""
    here = pathlib.Path(__file__).parent
    sys.path.insert(0, str(here))
    comparators = {}
    for path in sorted((here / "comparators").glob("[!_]*.py")):
        module = importlib.import_module(f"comparators.{path.stem}")
        for name, fn in module.benchmarks():
            if name.startswith(prefix):
                comparators[name] = (module.LABEL, fn)

    listing = subprocess.run([bench, "--json", "--batches", "1"] + (["--filter", prefix] if prefix else []),
                             check=True, capture_output=True, text=True).stdout
    # Time-per-operation records only; the transport group reports throughput and memory instead.
    ops = [r["op"] for r in map(json.loads, listing.splitlines()) if "median_us" in r]

    def swift_median(op):
        out = subprocess.run([bench, "--json", "--filter", op, "--batches", str(BATCHES)],
                             check=True, capture_output=True, text=True).stdout
        # --filter is a prefix match: pick the exact op.
        return next(r["median_us"] for r in map(json.loads, out.splitlines()) if r["op"] == op)

    print(f"CPU: {cpu_model()}")
    print(f"Each figure is the lowest of {ROUNDS} medians over {BATCHES} batches; Swift and native")
    print("rounds alternate, so both see the same machine load.")
    print(f"{'operation':28} {'Swift µs':>10} {'native µs':>10} {'ratio':>7}  native")
    for op in ops:
        if op not in comparators:
            print(f"{op:28} {min(swift_median(op) for _ in range(ROUNDS)):10.2f} {'-':>10} {'-':>7}")
            continue
        label, fn = comparators[op]
        swift_best, native_best = float("inf"), float("inf")
        for _ in range(ROUNDS):
            swift_best = min(swift_best, swift_median(op))
            native_best = min(native_best, median_us(fn))
        print(f"{op:28} {swift_best:10.2f} {native_best:10.2f} {swift_best / native_best:7.2f}  {label}")

if __name__ == "__main__":
    main()
