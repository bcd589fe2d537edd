"""Times the post-quantum operations of two cipher-bench builds, alternating, in one run.

Usage: python ab.py BASE_CIPHER_BENCH NEW_CIPHER_BENCH [ROUNDS] [--filter PREFIX]
For each operation, ROUNDS (default 11) pairs of runs alternate base and new, so both see the
same machine load; each run prints the median of 11 batches. The ratio new/base is printed for
the median of the runs and for the lowest run of each side (the estimator compare.py uses).
"""
import json
import subprocess
import sys

OPS = ["mlkem768.keygen", "mlkem768.encaps", "mlkem768.decaps", "mldsa65.keygen", "mldsa65.sign", "mldsa65.verify"]


def median_us(bench, op):
    out = subprocess.run([bench, "--json", "--filter", op, "--batches", "11"],
                         check=True, capture_output=True, text=True).stdout
    # --filter is a prefix match: pick the exact op.
    return next(r["median_us"] for r in map(json.loads, out.splitlines()) if r["op"] == op)


def main():
    args = [a for a in sys.argv[1:]]
    prefix = ""
    if "--filter" in args:
        at = args.index("--filter")
        prefix = args[at + 1]
        del args[at:at + 2]
    base, new = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 11
    print(f"{'operation':18} {'base µs':>9} {'new µs':>9} {'new/base':>9} {'lowest':>8}")
    for op in (o for o in OPS if o.startswith(prefix)):
        a, b = [], []
        for _ in range(rounds):
            a.append(median_us(base, op))
            b.append(median_us(new, op))
        a.sort()
        b.sort()
        ma, mb = a[len(a) // 2], b[len(b) // 2]
        print(f"{op:18} {ma:9.2f} {mb:9.2f} {mb / ma:9.2f} {b[0] / a[0]:8.2f}", flush=True)


if __name__ == "__main__":
    main()
