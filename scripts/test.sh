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

# check-jsonschema (scripts/ci-requirements.txt), for the workflow files, in a venv of its own. A
# fresh clone installs it in the background while the checks below run, which hide its seconds.
ci_venv=.build/ci-venv ci_venv_log=.build/ci-venv.log ci_venv_job=""
ci_wanted=$(grep -v '^\s*$' scripts/ci-requirements.txt)
stop_ci_venv() { [ -z "$ci_venv_job" ] || { pkill -TERM -P "$ci_venv_job" 2>/dev/null; kill "$ci_venv_job" 2>/dev/null; } || true; }
if [ ! -x "$ci_venv/bin/check-jsonschema" ] || [ "$(cat "$ci_venv/.requirements" 2>/dev/null)" != "$ci_wanted" ]; then
    phase "preparing $ci_venv (check-jsonschema), in the background"
    mkdir -p .build
    (
        set -e
        rm -rf "$ci_venv"
        python3 -m venv "$ci_venv"
        "$ci_venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r scripts/ci-requirements.txt
        printf '%s' "$ci_wanted" > "$ci_venv/.requirements"
    ) > "$ci_venv_log" 2>&1 &
    ci_venv_job=$!
    trap stop_ci_venv EXIT  # a check that fails stops it too (the later trap takes over once it is done)
fi

# The checks of what the compiler cannot see; each first proves it catches what it plants in a copy.
check() {  # WHAT SCRIPT
    phase "$1 (scripts/$2)"
    python3 "scripts/$2" --self-test
    python3 "scripts/$2"
}
# Apple platforms are built by construction: every Linux-only call has its Darwin branch.
check "platform guards" check_platform_guards.py
# The deployment floor (iOS 16 / macOS 13): no standard-library API from a newer Apple OS outside an
# availability guard, checked against the toolchain's own interface files.
check "availability" check_availability.py
check "Apple platforms link only the OS's libraries" check_apple_dependencies.py
# App Store Connect refuses code that calls a required-reason API no privacy manifest declares.
check "privacy manifests" check_privacy_manifests.py
# The module graph: the README's architecture table is the graph as built, and nothing points up.
check "module graph" check_module_graph.py
# The Apple workflow runs only on GitHub's macOS runners: what it decides outside Xcode (which Xcode,
# which simulator, what the result counts say) is scripts/apple_ci.py, tested here on fixtures, and
# the workflow files are checked against GitHub's schema.
check "Apple workflow's decisions" apple_ci.py
phase "workflow files (check-jsonschema --builtin-schema vendor.github-workflows)"
if [ -n "$ci_venv_job" ]; then
    wait "$ci_venv_job" || { cat "$ci_venv_log"; echo "preparing $ci_venv failed" >&2; exit 1; }
    ci_venv_job=""
fi
"$ci_venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml

# Every Swift snippet of the README and the documentation becomes a file of the SnippetTests
# target, which the `swift test` below compiles (package snippets are loaded against this package).
phase "documentation snippets (scripts/check_snippets.py)"
python3 scripts/check_snippets.py

# One build of the default configuration, tests included. SwiftPM checks that every `import`
# names a declared dependency of its target, and the compiler that nothing warns.
phase "build (default configuration)"
swift build --build-tests --explicit-target-dependency-import-check error -Xswiftc -warnings-as-errors

# Every file the run writes is in one scratch directory; a run that stops early (a failed test, a
# failed build, Ctrl-C) also stops the background builds below, which would outlive it otherwise.
scratch=$(mktemp -d)
log=$scratch/count apple_log=$scratch/apple-count background_log=$scratch/background.log
background="" finals=()
cleanup() {
    # The build under way first (a child of the subshell), then the subshell, which would start the next.
    [ -z "$background" ] || { pkill -TERM -P "$background" 2>/dev/null; kill "$background" 2>/dev/null; } || true
    for final in "${finals[@]}"; do pkill -TERM -P "$final" 2>/dev/null; kill "$final" 2>/dev/null; done || true
    rm -rf "$scratch"
}
trap cleanup EXIT

# The number of tests a runner's log says ran ("Test run with N tests …"), or nothing.
test_count() { { grep -E "Test run with [0-9]+ tests?" "$1" || true; } | tail -n 1 | sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/'; }

if [ $# -eq 0 ]; then
    # The other builds the later phases need (the Apple configuration, the benchmarks package, the
    # fuzz harnesses' sanitizer build) run now at a lower priority, one after the other in the order
    # the later phases need them: they take the CPU the tests below leave idle while they wait on
    # processes, sockets and timers, and little of the rest. Each leaves a mark when it is done
    # (`built` below), so a later phase starts as soon as its own build is.
    (
        set -e
        nice -n 10 swift build --build-tests --disable-default-traits --scratch-path .build/apple-configuration -Xswiftc -warnings-as-errors
        touch "$scratch/built-apple-configuration"
        for product in cipher-bench station-client-bench; do
            nice -n 10 swift build --package-path Benchmarks --scratch-path .build/benchmarks --product "$product"
        done
        touch "$scratch/built-benchmarks"
        FUZZ_CONFIGURATION=debug FUZZ_BUILD_ONLY=1 nice -n 10 bash Fuzz/run.sh
        touch "$scratch/built-fuzz"
    ) > "$background_log" 2>&1 &
    background=$!
fi

# The tests run as several processes of the built test binary at once, one per group of targets:
# each process has its own cooperative thread pool, so the CPU-heavy suites (vectors, interop,
# 100 MiB CIDs), which run in parallel, never hold the threads that the suites waiting on sockets,
# processes and timers need; those run one test at a time in their groups. A group is
# "parallel:REGEX" or "serial:REGEX", optionally ":SKIP-REGEX"; each group's log is printed whole
# when every group has ended, then the summed count.
run_test_groups() {  # BINARY LOG GROUP...
    local binary=$1 summary=$2 pids=() logs=() status=0 total=0 group mode rest filter skip index
    shift 2
    for group in "$@"; do
        mode=${group%%:*}; rest=${group#*:}; filter=${rest%%:*}; skip=""
        [ "$rest" = "$filter" ] || skip=${rest#*:}
        local arguments=(--testing-library swift-testing --filter "$filter")
        [ -z "$skip" ] || arguments+=(--skip "$skip")
        [ "$mode" = parallel ] || arguments+=(--no-parallel)
        logs+=("$scratch/group-${#logs[@]}.log")
        "$binary" "${arguments[@]}" > "${logs[-1]}" 2>&1 &
        pids+=($!)
    done
    for index in "${!pids[@]}"; do
        wait "${pids[$index]}" || status=1
        cat "${logs[$index]}"
        local count
        count=$(test_count "${logs[$index]}")
        total=$((total + ${count:-0}))
    done
    echo "$total" > "$summary"
    return $status
}

phase "swift test"
# The station's halves of signing and content addressing (the emulator's verifier, DAG builder and
# IPNS writer against the client's code) are StationEmulatorTests (Tests/StationEmulatorTests/StationHalves),
# CPU-bound like the primitives' tests, so they run with those.
station_halves='^StationEmulatorTests\.(RequestVerifierTests|UnixFSDAGTests|HostileUnixFSTests|IPNSRecordWritingTests|PythonParsingInteropTests)/'
if [ $# -eq 0 ]; then
    bin=$(swift build --show-bin-path)
    run_test_groups "$bin/swift-cipher-stationPackageTests.xctest" "$log" \
        "parallel:^(PQCryptoTests|ClassicalCryptoTests|EnvelopeTests|SigningTests|OrderedJSONTests|ContentAddressingTests|ManifestTests)\.|$station_halves" \
        "serial:^(CipherCLITests|ExampleTests)\." \
        "serial:^StationClientTests\.(TrustTests|TransportScenarioTests|EndToEndTests)/" \
        "serial:^StationClientTests\.:^StationClientTests\.(TrustTests|TransportScenarioTests|EndToEndTests)/" \
        "serial:^DriveSyncTests\." \
        "serial:^(TransportTests|CurlTransportTests|URLSessionTransportTests|StationEmulatorTests|SnippetTests)\.:$station_halves"
    # Every test ran in some group (a new test target needs a place above).
    listed=$("$bin/swift-cipher-stationPackageTests.xctest" --testing-library swift-testing --list-tests | grep -c .)
    [ "$(cat "$log")" = "$listed" ] || { echo "the groups ran $(cat "$log") of $listed tests: add the missing target to a group" >&2; exit 1; }
else
    swift test --skip-build --no-parallel "$@" 2>&1 | tee "$scratch/filtered.log"
    test_count "$scratch/filtered.log" > "$log"
fi

# Waits until the background build NAME is done; a background that ended without it failed.
built() {  # NAME
    while [ ! -e "$scratch/built-$1" ]; do
        if ! kill -0 "$background" 2>/dev/null; then
            [ -e "$scratch/built-$1" ] && return 0
            cat "$background_log"
            echo "a background build failed" >&2
            return 1
        fi
        sleep 1
    done
}

# The Apple configuration, built and run here: without the default SystemLibraries trait the package
# links no system library (pure-Swift SecretBox, BLAKE2b, Argon2, Ed25519, SHA-256; URLSessionTransport
# as the default transport), exactly as iOS and macOS get it. Its own scratch path keeps the default
# build intact. Skipped only when tests were filtered to a subset.
apple_tests() {
    built apple-configuration
    phase "swift test, Apple configuration (--disable-default-traits)"
    # The transport scenarios (every shipped transport, TLS fronts) ran above and test no primitive;
    # nor do the two size-limit tests, which check the request's framing by sealing 100 MiB posts
    # (eight of them, in a debug build of the pure-Swift SecretBox and SHA-256: most of this phase's
    # time; those primitives have their own tests here), nor the 96 MiB publish that counts what a
    # publish writes (2.5 minutes here for no primitive tested). The key stores (Argon2 in pure
    # Swift: half the client's time here) run in a group of their own. Nor do the sync's long scenario suites
    # (moves, lost files, listing bounds, watching, app-facing data, remote roots, ignore rules,
    # status and storage: decisions over the in-process emulator, the same code in both
    # configurations); the sync's other suites run here, through the pure-Swift primitives.
    run_test_groups ".build/apple-configuration/debug/swift-cipher-stationPackageTests.xctest" "$apple_log" \
        "parallel:^(ClassicalCryptoTests|EnvelopeTests|SigningTests|ManifestTests|OrderedJSONTests|ContentAddressingTests)\.|$station_halves" \
        "serial:^StationClientTests\.(TrustTests|EndToEndTests)/" \
        "serial:^StationClientTests\.KeyStoreTests/" \
        "serial:^StationClientTests\.:^StationClientTests\.((TrustTests|TransportScenarioTests|EndToEndTests|KeyStoreTests)/|ReadWriteTests/sizeLimit|PublisherTests/largestFillsTheRequest|RestartedBodyTests/aLargeFileIsNeverStaged)" \
        "serial:^DriveSyncTests\.:^DriveSyncTests\.(MoveTests|ListingBoundTests|NoFileLostTests|WatchTests|AppFacingSyncTests|RemoteRootTests|IgnoreSyncTests|SyncStatusTests|SyncStorageTests|ParallelTransferTests)/"
    phase "swift test, Apple configuration: done"
}

# A short libFuzzer smoke run of every harness (its seed corpus plus 5 s of new inputs each, two
# at a time); Fuzz/README.md has the long run.
fuzz_smoke() {
    phase "fuzz smoke run (FUZZ_CONFIGURATION=debug FUZZ_JOBS=2 Fuzz/run.sh 5)"
    FUZZ_CONFIGURATION=debug FUZZ_JOBS=2 bash Fuzz/run.sh 5
    phase "fuzz smoke run: done"
}

# The benchmarks (their own package, built above in debug) run once, briefly, so they keep working:
# the figures themselves come from release builds (Benchmarks/README.md). station-client-bench exits
# 1 when a figure misses its goal, which a debug build may; 2 or a crash fails the run.
benchmarks_smoke() {
    built benchmarks
    phase "benchmarks smoke run (Benchmarks/Package.swift, debug)"
    local benchmarks=.build/benchmarks/debug bench_status=0
    "$benchmarks/cipher-bench" --filter sha3 --batches 1
    # The emulator it starts is the root package's debug build (the station needs no second build).
    "$benchmarks/station-client-bench" --emulator "$bin/cipher-station-emulator" --posts 20 --reference-posts 0 --cold-runs 1 --large-file no \
        || bench_status=$?
    [ "$bench_status" -le 1 ] || { echo "station-client-bench failed (exit $bench_status)" >&2; return 1; }
    phase "benchmarks smoke run: done"
}

# The DocC build (warnings are errors) and the check that every public symbol is documented.
documentation() {
    phase "documentation (scripts/docs.sh)"
    bash scripts/docs.sh
    phase "documentation: done"
}

# These three need nothing of each other and no further build of the default configuration's
# tests, so they run side by side, each as soon as its own build is done, while the remaining
# background builds go on: the Apple configuration's serial groups wait on sockets, processes and
# timers, which the others fill. Each one's log is printed whole once all have ended. The fuzz
# smoke run comes after, alone: libFuzzer's per-input time limit must not meet a machine that
# other jobs share.
if [ $# -eq 0 ]; then
    phase "the Apple configuration's tests, the benchmarks smoke run and the documentation, side by side"
    finals=()
    for final in apple_tests benchmarks_smoke documentation; do
        ( set -e; "$final" ) > "$scratch/$final.log" 2>&1 &
        finals+=("$!")
    done
    final_status=0
    for index in "${!finals[@]}"; do wait "${finals[$index]}" || final_status=1; done
    finals=()
    for final in apple_tests benchmarks_smoke documentation; do cat "$scratch/$final.log"; done
    [ "$final_status" -eq 0 ] || { echo "a final phase failed (its log is above)" >&2; exit 1; }
    phase "waiting for the background builds"
    wait "$background" || { background=""; cat "$background_log"; echo "a background build failed" >&2; exit 1; }
    background=""
    grep -E "error|warning: " "$background_log" || true
    fuzz_smoke
fi

phase "done"

# The counts last, so they close the run (the runs above stop the script on any failure).
if [ $# -eq 0 ]; then
    echo "Apple configuration: $(cat "$apple_log") tests passed"
fi
echo "swift test: $(cat "$log") passed, 0 failed"
