#!/usr/bin/env bash
# Instruction counts (callgrind) per operation of this checkout's post-quantum code:
#   bash Benchmarks/MLDSACallgrind/run.sh [N]          # ML-DSA-65 keygen, sign, verify
#   bash Benchmarks/MLDSACallgrind/run.sh [N] mlkem    # ML-KEM-768 keygen, encaps, decaps
# Builds the workload in release mode, runs a copy stripped of debug info (valgrind 3.19 stops
# on Swift's DWARF otherwise) and subtracts the setup, so the figures repeat exactly (ML-KEM
# encapsulation draws the system's randomness, so its count can vary by a few instructions).
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-20}
algorithm=${2:-mldsa}
swift build -c release >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/bin" .build/release/mldsa-callgrind
count() { valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/bin" "$@" 2>&1 | sed -n 's/.*Collected : //p'; }
if [ "$algorithm" = mlkem ]; then
    per() { local zero full; zero=$(count "$1" 0); full=$(count "$1" "$n"); echo $(( (full - zero) / n )); }
    echo "instructions per operation (mean of $n): ML-KEM-768 keygen $(per mlkem-keygen)  encaps $(per mlkem-encaps)  decaps $(per mlkem-decaps)"
    exit 0
fi
base=$(count keygen 0)
keygen=$(count keygen "$n")
sign=$(count sign "$n")
setup=$(count verify-setup "$n")
verify=$(count verify "$n")
kept=$(count verify-kept "$n")
echo "instructions per operation (mean of $n): keygen $(( (keygen - base) / n ))  sign $(( (sign - base) / n ))  verify $(( (verify - setup) / n ))  verify with a kept key $(( (kept - setup) / n ))"
