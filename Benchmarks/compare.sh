#!/usr/bin/env bash
# Builds cipher-bench in release mode and prints Swift / native ratios (OpenSSL through PyPI
# `cryptography`, PyNaCl) measured in the same run. Arguments are passed on (e.g. --filter mlkem).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh
venv=.build/bench-venv
if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r Benchmarks/requirements.txt
fi
swift build -c release --product cipher-bench >/dev/null
"$venv/bin/python3" Benchmarks/compare.py .build/release/cipher-bench "$@"
