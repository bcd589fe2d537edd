#!/usr/bin/env bash
# Instruction counts (callgrind) per ML-DSA-65 keygen, sign and verify of this checkout:
#   bash Benchmarks/MLDSACallgrind/run.sh [N]
# Builds the workload in release mode, runs a copy stripped of debug info (valgrind 3.19 stops
# on Swift's DWARF otherwise) and subtracts the setup, so the figures repeat exactly.
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-20}
swift build -c release >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/bin" .build/release/mldsa-callgrind
count() { valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/bin" "$@" 2>&1 | sed -n 's/.*Collected : //p'; }
base=$(count keygen 0)
keygen=$(count keygen "$n")
sign=$(count sign "$n")
setup=$(count verify-setup "$n")
verify=$(count verify "$n")
kept=$(count verify-kept "$n")
echo "instructions per operation (mean of $n): keygen $(( (keygen - base) / n ))  sign $(( (sign - base) / n ))  verify $(( (verify - setup) / n ))  verify with a kept key $(( (kept - setup) / n ))"
