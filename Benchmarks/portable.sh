#!/usr/bin/env bash
# The pure-Swift classical primitives (what Apple platforms run) against libsodium and libcrypto:
#   bash Benchmarks/portable.sh [ROUNDS]
# 1. `cipher-bench --filter portable` (release, default traits): SecretBox one-shot and streamed
#    over 64 MiB, BLAKE2b-256 and SHA-256 over 1 MiB, Argon2id at the key store's cost, Ed25519
#    verify and sign; pure and system in alternating rounds in one process, with their ratio.
# 2. Envelope open in the Apple configuration (CIPHER_APPLE_CONFIGURATION=1: the SDK without its default trait, own scratch path)
#    against the default configuration: the two release binaries alternate ROUNDS times (default
#    5) and the medians of their `envelope.open` medians give the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
apple_scratch=Benchmarks/.build/apple-configuration
swift build -c release --package-path Benchmarks --product cipher-bench >/dev/null
CIPHER_APPLE_CONFIGURATION=1 swift build -c release --package-path Benchmarks --product cipher-bench --scratch-path "$apple_scratch" >/dev/null
default_bin=Benchmarks/.build/release/cipher-bench
apple_bin=$apple_scratch/release/cipher-bench

echo "== pure Swift against the system libraries (one process, alternating rounds)"
"$default_bin" --filter portable

echo "== envelope open: Apple configuration against default ($rounds alternating runs)"
python3 - "$default_bin" "$apple_bin" "$rounds" <<'PY'
import json, statistics, subprocess, sys
default_bin, apple_bin, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def once(binary):
    out = subprocess.run([binary, "--json", "--filter", "envelope.open"], check=True, capture_output=True, text=True).stdout
    return next(json.loads(line)["median_us"] for line in out.splitlines() if '"envelope.open"' in line)
default, apple = [], []
for _ in range(rounds):
    default.append(once(default_bin))
    apple.append(once(apple_bin))
d, a = statistics.median(default), statistics.median(apple)
print(f"envelope.open  default {d:.2f} µs   Apple configuration {a:.2f} µs   ratio {a / d:.3f}")
PY
