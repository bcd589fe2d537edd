#!/usr/bin/env bash
# Builds the libFuzzer harness (Fuzz/FuzzManifest.swift) against the Manifest sources, with
# coverage and AddressSanitizer, and runs it for the given number of seconds (default 60).
#   bash Fuzz/run.sh            # one minute
#   bash Fuzz/run.sh 600        # ten minutes
#   bash Fuzz/run.sh 0          # replay the seed corpus only
# New corpus entries go to .build/fuzz/corpus (the committed Fuzz/corpus is only read);
# a crashing input is written to .build/fuzz/crash-* and the script exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
scratch=.build/fuzz
flags=(-Xswiftc -sanitize=fuzzer,address)

echo "==> building Manifest (release, -sanitize=fuzzer,address) in $scratch"
swift build -c release --scratch-path "$scratch" --target Manifest "${flags[@]}" 2>&1 | grep -v '^\[' || true
products="$scratch/release"
test -d "$products/Manifest.build" || { echo "Manifest did not build" >&2; exit 1; }

echo "==> linking the harness"
swiftc -O -sanitize=fuzzer,address -parse-as-library \
    -I "$products/Modules" -I "$products" -I Sources/CSodium -I Sources/CSystemRandom \
    Fuzz/FuzzManifest.swift \
    "$products"/Manifest.build/*.o "$products"/Sodium.build/*.o "$products"/PQCrypto.build/*.o \
    -lsodium -o "$scratch/fuzz-manifest" 2>&1 | grep -v 'Cannot export local symbol' || true
test -x "$scratch/fuzz-manifest" || { echo "the harness did not link" >&2; exit 1; }

mkdir -p "$scratch/corpus"
if [ "$seconds" = "0" ]; then
    echo "==> replaying Fuzz/corpus"
    exec "$scratch/fuzz-manifest" -runs=0 Fuzz/corpus
fi
echo "==> fuzzing for $seconds s"
"$scratch/fuzz-manifest" -max_total_time="$seconds" -max_len=65536 -timeout=20 \
    -artifact_prefix="$scratch/" -print_final_stats=1 "$scratch/corpus" Fuzz/corpus
