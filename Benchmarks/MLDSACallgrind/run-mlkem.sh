#!/usr/bin/env bash
# Instruction counts (callgrind) per ML-KEM-768 keygen, encapsulation and decapsulation of this
# checkout, with the same workload binary as run.sh:
#   bash Benchmarks/MLDSACallgrind/run-mlkem.sh [N]
# Encapsulation draws the system's randomness, so its count can vary by a few instructions.
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-20}
swift build -c release >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/bin" .build/release/mldsa-callgrind
count() { valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/bin" "$@" 2>&1 | sed -n 's/.*Collected : //p'; }
per() { local zero full; zero=$(count "$1" 0); full=$(count "$1" "$n"); echo $(( (full - zero) / n )); }
echo "instructions per operation (mean of $n): ML-KEM-768 keygen $(per mlkem-keygen)  encaps $(per mlkem-encaps)  decaps $(per mlkem-decaps)"
