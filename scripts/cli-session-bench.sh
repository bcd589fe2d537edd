#!/usr/bin/env bash
# The `cipher` session figures (issue 28): wall time and peak RSS of the first `cipher status` of a
# session (the passphrase, Argon2id at the store's cost) and of the commands after it (a session
# key kept in the kernel session keyring opening the session's sealed copy of the store key),
# against a local cipher-station-emulator. Runs in a session keyring of its own (`cipher` keeps
# nothing in the user's shared default one, which ssh and containers give).
#
#   bash scripts/cli-session-bench.sh [RUNS]      (RUNS second commands, default 5)
#
# Builds both executables in release (set BIN=DIR to use ones already built there).
# Targets: a second `cipher status` <= 0.2 s wall and <= 80 MB peak RSS.
set -euo pipefail
if [[ -z "${CIPHER_BENCH_SESSION:-}" ]]; then
    # A new anonymous session keyring (KEYCTL_JOIN_SESSION_KEYRING), as pam_keyinit gives a login.
    exec env CIPHER_BENCH_SESSION=1 python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall({"x86_64": 250, "aarch64": 219}[os.uname().machine], 1, None) < 0:
    sys.exit("cannot make a session keyring")
os.execvp("bash", ["bash"] + sys.argv[1:])' "$0" "$@"
fi
cd "$(dirname "$0")/.."
runs="${1:-5}"
if [[ -z "${BIN:-}" ]]; then
    swift build -c release --product cipher >&2
    swift build -c release --product cipher-station-emulator >&2
    BIN="$(swift build -c release --show-bin-path)"
fi
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }

work="$(mktemp -d)"
emulator_pid=""
cleanup() {
    [[ -n "$emulator_pid" ]] && kill "$emulator_pid" 2>/dev/null && wait "$emulator_pid" 2>/dev/null
    CIPHER_KEEP_UNLOCKED=0 "$BIN/cipher" lock --home "$work/home" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
"$BIN/cipher-station-emulator" --port "$(free_port)" --gateway-port "$(free_port)" --log "$work/station.log" \
    >"$work/emulator.out" 2>/dev/null &
emulator_pid=$!
for _ in $(seq 100); do grep -q '^gateway: ' "$work/emulator.out" 2>/dev/null && break; sleep 0.1; done
station="$(sed -n 's/^station: //p' "$work/emulator.out")"
[[ -n "$station" ]] || { echo "the emulator did not start" >&2; exit 1; }

export CIPHER_HOME="$work/home"
pin() {  # waits for the pairing PIN in the station's log and prints it (the pairing prompt reads it)
    for _ in $(seq 300); do
        grep -q 'PAIRING PIN' "$work/station.log" 2>/dev/null && break
        sleep 0.1
    done
    sed -n 's/.*PAIRING PIN: \([0-9]*\).*/\1/p' "$work/station.log" | tail -1
}
pin | CIPHER_PASSPHRASE=bench-passphrase "$BIN/cipher" pair "$station" --name bench >/dev/null
"$BIN/cipher" lock >/dev/null   # start the session locked

measure() {  # label, then the environment and command: prints wall seconds and peak RSS
    local label="$1"; shift
    /usr/bin/time -f '%e %M' -o "$work/time" env "$@" status </dev/null >/dev/null
    read -r wall rss <"$work/time"
    printf '%-34s %6.2f s  %7.1f MB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
echo "cipher status against $station (release, $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg))"
# The floor: starting the executable at all (dynamic loading of Foundation and libcurl), no work.
/usr/bin/time -f '%e %M' -o "$work/time" "$BIN/cipher" --help >/dev/null
read -r wall rss <"$work/time"
printf '%-34s %6.2f s  %7.1f MB\n' "floor: cipher --help" "$wall" "$(echo "$rss / 1024" | bc -l)"
measure "first (passphrase, Argon2id)" CIPHER_PASSPHRASE=bench-passphrase "$BIN/cipher"
for run in $(seq "$runs"); do
    measure "second #$run (key kept in keyring)" "$BIN/cipher"
done
"$BIN/cipher" lock >/dev/null
measure "after cipher lock (passphrase)" CIPHER_PASSPHRASE=bench-passphrase "$BIN/cipher"
