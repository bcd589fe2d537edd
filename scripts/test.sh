#!/usr/bin/env bash
# Runs the whole test suite on a fresh Debian machine with the Swift toolchain:
# installs the system libraries if they are missing, prepares the Python environment that the
# interop tests compare against (kyber-py, dilithium-py, PyNaCl: what real stations run), then
# runs `swift test`. Extra arguments go to `swift test` (e.g. --filter MLKEM).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's header starts with the time of day, so a run's log shows what each phase costs.
phase() { echo "==> [$(date +%T)] $*"; }

bash scripts/install-system-deps.sh

venv=.build/interop-venv
wanted=$(grep -v '^\s*$' Tests/Interop/requirements.txt)
if [ ! -x "$venv/bin/python3" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$wanted" ]; then
    phase "preparing $venv ($(echo $wanted | tr '\n' ' '))"
    python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r Tests/Interop/requirements.txt
    printf '%s' "$wanted" > "$venv/.requirements"
fi
export CIPHER_INTEROP_PYTHON="$PWD/$venv/bin/python3"

# Apple platforms are built by construction: every Linux-only call has its Darwin branch.
phase "platform guards (scripts/check_platform_guards.py)"
python3 scripts/check_platform_guards.py --self-test
python3 scripts/check_platform_guards.py

# The deployment floor (iOS 16 / macOS 13): no standard-library API from a newer Apple OS outside an
# availability guard, checked against the toolchain's own interface files.
phase "availability (scripts/check_availability.py)"
python3 scripts/check_availability.py --self-test
python3 scripts/check_availability.py
python3 scripts/check_apple_dependencies.py --self-test
python3 scripts/check_apple_dependencies.py

# The module graph: the README's architecture table is the graph as built, and nothing points up.
phase "module graph (scripts/check_module_graph.py)"
python3 scripts/check_module_graph.py --self-test
python3 scripts/check_module_graph.py

# Every Swift snippet of the README and the documentation becomes a file of the SnippetTests
# target, which the `swift test` below compiles (package snippets are loaded against this package).
phase "documentation snippets (scripts/check_snippets.py)"
python3 scripts/check_snippets.py

# Serially: on a 2-core machine, CPU-heavy suites (vectors, 100 MiB CIDs) running beside the
# streaming transport tests would starve them of the two cooperative threads.
phase "swift test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift test --no-parallel "$@" 2>&1 | tee "$log"

# The Apple configuration, built and run here: without the default SystemLibraries trait the package
# links no system library (pure-Swift SecretBox, BLAKE2b, Argon2, Ed25519, SHA-256; URLSessionTransport
# as the default transport), exactly as iOS and macOS get it. Its own scratch path keeps the default
# build intact. Skipped only when tests were filtered to a subset.
apple_summary=""
if [ $# -eq 0 ]; then
    phase "swift test, Apple configuration (--disable-default-traits)"
    apple_log=$(mktemp)
    trap 'rm -f "$log" "$apple_log"' EXIT
    # The transport scenarios (every shipped transport, TLS fronts) ran above and test no primitive.
    swift test --no-parallel --disable-default-traits --scratch-path .build/apple-configuration \
        --filter 'ClassicalCryptoTests|EnvelopeTests|SigningTests|ManifestTests|OrderedJSONTests|ContentAddressingTests|StationClientTests' \
        --skip 'TransportScenarioTests' 2>&1 | tee "$apple_log"
    apple_summary=$(grep -E "Test run with [0-9]+ tests? .* passed" "$apple_log" | tail -n 1 || true)
fi

# A short libFuzzer smoke run of every harness (its seed corpus plus 10 s of new inputs each);
# Fuzz/README.md has the long run. Skipped only when tests were filtered to a subset.
if [ $# -eq 0 ]; then
    phase "fuzz smoke run (FUZZ_CONFIGURATION=debug Fuzz/run.sh 10)"
    FUZZ_CONFIGURATION=debug bash Fuzz/run.sh 10
fi

# The DocC build (warnings are errors) and the check that every public symbol is documented.
if [ $# -eq 0 ]; then
    phase "documentation (scripts/docs.sh)"
    bash scripts/docs.sh
fi

phase "done"

# Repeat the test runner's verdict last, so it is the closing line of the run.
summary=$(grep -E "Test run with [0-9]+ tests? .* passed" "$log" | tail -n 1 || true)
if [ -n "$apple_summary" ]; then
    echo "Apple configuration: $(echo "$apple_summary" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/') tests passed"
fi
if [ -n "$summary" ]; then
    count=$(echo "$summary" | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/')
    echo "swift test: $count passed, 0 failed"
fi
