#!/usr/bin/env bash
# Builds the libFuzzer harnesses (Fuzz/Fuzz*.swift) against the package's own modules, with
# coverage and AddressSanitizer (one sanitizer build shared by all of them), and runs each for the
# given number of seconds (default 60).
#   bash Fuzz/run.sh                  # every harness, one minute each
#   bash Fuzz/run.sh 600 cid          # the CID harness for ten minutes
#   bash Fuzz/run.sh 0                # replay every seed corpus only
#   FUZZ_JOBS=2 bash Fuzz/run.sh 10   # two harnesses at a time (each runs on one core)
#   FUZZ_BUILD_ONLY=1 bash Fuzz/run.sh # the sanitizer build alone (the test command starts it early)
# Harnesses: manifest, cid, ipns, envelope, emulator-http, keystore, sync-planner (Fuzz/README.md says what each reads).
# New corpus entries go to .build/fuzz/corpus/<harness> (the committed Fuzz/corpus/<harness> is
# only read); a crashing input is written to .build/fuzz/<harness>-crash-* and the script exits
# non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all=(manifest cid ipns envelope emulator-http keystore sync-planner)
if [ $# -gt 0 ]; then harnesses=("$@"); else harnesses=("${all[@]}"); fi
scratch=.build/fuzz
flags=(-Xswiftc -sanitize=fuzzer,address)
# FUZZ_CONFIGURATION=debug builds the modules unoptimized: a cold build takes a fraction of the
# time (files compile in parallel instead of one optimizing pass per module) and inputs run a few
# times slower, the right trade for the test command's short smoke run. Default: release.
configuration="${FUZZ_CONFIGURATION:-release}"
case "$configuration" in release | debug) ;; *) echo "FUZZ_CONFIGURATION is release or debug" >&2; exit 2 ;; esac

# The target each harness is built from; the modules it links are that target and everything it
# depends on, read from the package manifest so that a new dependency needs no change here.
top_target_for() {
    case "$1" in
        manifest | cid | ipns | emulator-http) echo StationEmulator ;;
        envelope) echo Envelope ;;
        keystore) echo StationClient ;;
        sync-planner) echo DriveSync ;;
        *) echo "unknown harness $1 (known: ${all[*]})" >&2; exit 2 ;;
    esac
}
package_json=$(swift package dump-package)
modules_for() {
    top=$(top_target_for "$1")
    PACKAGE_JSON="$package_json" python3 - "$top" <<'PY'
import json, os, sys
targets = {t["name"]: t for t in json.loads(os.environ["PACKAGE_JSON"])["targets"]}
order, seen = [], set()
def visit(name):
    if name in seen or name not in targets:
        return
    seen.add(name)
    for dependency in targets[name].get("dependencies", []):
        for kind in ("byName", "target"):
            if kind in dependency:
                visit(dependency[kind][0])
    if targets[name].get("type") == "regular":
        order.append(name)
visit(sys.argv[1])
print(" ".join(reversed(order)))
PY
}
source_for() {
    case "$1" in
        manifest) echo Fuzz/FuzzManifest.swift ;;
        cid) echo Fuzz/FuzzCID.swift ;;
        ipns) echo Fuzz/FuzzIPNS.swift ;;
        envelope) echo Fuzz/FuzzEnvelope.swift ;;
        emulator-http) echo Fuzz/FuzzEmulatorHTTP.swift ;;
        keystore) echo Fuzz/FuzzKeyStore.swift ;;
        sync-planner) echo Fuzz/FuzzSyncPlanner.swift ;;
    esac
}

# One build of the top-level targets the chosen harnesses need; shared modules build once.
targets=()
for harness in "${harnesses[@]}"; do
    top=$(top_target_for "$harness")
    case " ${targets[*]-} " in *" $top "*) ;; *) targets+=("$top") ;; esac
done
for target in "${targets[@]}"; do
    echo "==> building $target ($configuration, -sanitize=fuzzer,address) in $scratch"
    swift build -c "$configuration" --scratch-path "$scratch" --target "$target" "${flags[@]}" 2>&1 | grep -v '^\[' || true
done
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0
products="$scratch/$configuration"
jobs="${FUZZ_JOBS:-1}"
# The harnesses read the modules' `package` API (WireJSON, UnixFS, Multibase…), as the package's own
# targets do: they are compiled with the package name SwiftPM gave the modules (the root package's
# identity, which is the checkout's directory name), read from its build description.
package_name=$(grep -o -- '-package-name","[^"]*"' "$scratch/$configuration.yaml" | head -n 1 | cut -d'"' -f3)
[ -n "$package_name" ] || { echo "no -package-name in $scratch/$configuration.yaml" >&2; exit 1; }

# A trap is reported by libFuzzer; Swift's own backtracer would only add noise (and reading the
# stack from its helper thread trips AddressSanitizer).
export SWIFT_BACKTRACE=enable=no
# Link every harness first, then run them, `jobs` at a time; each one's output is printed whole
# when it ends, so parallel runs do not interleave.
binaries=()
for harness in "${harnesses[@]}"; do
    objects=()
    for module in $(modules_for "$harness"); do
        test -d "$products/$module.build" || { echo "$module did not build" >&2; exit 1; }
        objects+=("$products/$module.build"/*.o)
    done
    libraries=(-lsodium -lcrypto)
    case " $(modules_for "$harness") " in *" CurlTransport "*) libraries+=(-lcurl) ;; esac
    binary="$scratch/fuzz-$harness"
    [ "$configuration" = release ] || binary="$scratch/fuzz-$harness-$configuration"
    echo "==> linking fuzz-$harness"
    rm -f "$binary"
    swiftc -O -sanitize=fuzzer,address -parse-as-library -package-name "$package_name" \
        -I "$products/Modules" -I "$products" -I Sources/CSodium -I Sources/CLibCrypto -I Sources/CSystemRandom -I Sources/CCurl \
        "$(source_for "$harness")" Fuzz/AllocationMeter.swift "${objects[@]}" "${libraries[@]}" -o "$binary" 2>&1 \
        | grep -v 'Cannot export local symbol' || true
    test -x "$binary" || { echo "fuzz-$harness did not link" >&2; exit 1; }
    binaries+=("$binary")
done

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
run_harness() {
    local harness=$1 binary=$2
    local corpus="$scratch/corpus/$harness"
    mkdir -p "$corpus"
    if [ "$seconds" = "0" ]; then
        echo "==> fuzz-$harness: replaying Fuzz/corpus/$harness"
        ASAN_OPTIONS="detect_leaks=1" "$binary" -runs=0 "Fuzz/corpus/$harness"
        return
    fi
    echo "==> fuzz-$harness: fuzzing for $seconds s"
    ASAN_OPTIONS="detect_leaks=1" "$binary" -detect_leaks=1 -max_total_time="$seconds" -max_len=65536 -timeout=20 -rss_limit_mb=3072 \
        -artifact_prefix="$scratch/$harness-" -print_final_stats=1 "$corpus" "Fuzz/corpus/$harness"
}
status=0
pids=()
finish() {  # waits for the oldest running harness and prints its output
    local pid=${pids[0]} index=${indices[0]}
    pids=("${pids[@]:1}"); indices=("${indices[@]:1}")
    wait "$pid" || { status=1; echo "fuzz-${harnesses[$index]} FAILED" >> "$logs/$index"; }
    cat "$logs/$index"
}
indices=()
for index in "${!harnesses[@]}"; do
    [ "${#pids[@]}" -lt "$jobs" ] || finish
    run_harness "${harnesses[$index]}" "${binaries[$index]}" > "$logs/$index" 2>&1 &
    pids+=($!); indices+=("$index")
done
while [ "${#pids[@]}" -gt 0 ]; do finish; done
exit $status
