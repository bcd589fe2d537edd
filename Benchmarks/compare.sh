#!/usr/bin/env bash
# Builds cipher-bench in release mode and prints Swift / native ratios (OpenSSL through PyPI
# `cryptography`, PyNaCl) measured in the same run. Arguments are passed on (e.g. --filter mlkem).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh
venv=.build/bench-venv
wanted=$(grep -v '^\s*$' Benchmarks/requirements.txt)
if [ ! -x "$venv/bin/python3" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$wanted" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r Benchmarks/requirements.txt
    printf '%s' "$wanted" > "$venv/.requirements"
fi
swift build -c release --package-path Benchmarks --product cipher-bench >/dev/null
"$venv/bin/python3" Benchmarks/compare.py Benchmarks/.build/release/cipher-bench "$@"
