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

BATCHES = 31


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

    args = [bench, "--json"] + (["--filter", prefix] if prefix else [])
    swift = {}
    for line in subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines():
        record = json.loads(line)
        swift[record["op"]] = record["median_us"]

    print(f"CPU: {cpu_model()}")
    print(f"{'operation':28} {'Swift µs':>10} {'native µs':>10} {'ratio':>7}  native")
    for op, us in swift.items():
        if op in comparators:
            label, fn = comparators[op]
            native = median_us(fn)
            print(f"{op:28} {us:10.2f} {native:10.2f} {us / native:7.2f}  {label}")
        else:
            print(f"{op:28} {us:10.2f} {'-':>10} {'-':>7}")


if __name__ == "__main__":
    main()
