#!/usr/bin/env bash
# Builds the DocC documentation of every library module with the toolchain's `docc` (symbol
# graphs from `swift package dump-symbol-graph`; no plugin needed), with warnings as errors, and
# fails when a public symbol has no doc comment or the public surface differs from the pinned
# lists in Tests/PublicSurface. Output: .build/docs/<Module>.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh

modules=(ErrorKinds PQCrypto SHA2 ClassicalCrypto Envelope Signing OrderedJSON ContentAddressing Manifest Transport CurlTransport URLSessionTransport LoopbackHTTP HTTPTransportConformance)
for optional in StationEmulator StationClient DriveSync; do
    [ -d "Sources/$optional" ] && modules+=("$optional")
done

echo "==> symbol graphs"
# With the test command's compiler flags, so the build it made is reused rather than redone.
swift package -Xswiftc -warnings-as-errors dump-symbol-graph --minimum-access-level public >/dev/null
graphs=$(find .build -type d -name symbolgraph -path "*$(uname -m)*" | head -n 1)
[ -n "$graphs" ] || { echo "no symbol graphs were written" >&2; exit 1; }

echo "==> public symbols without a doc comment"
python3 scripts/check_doc_comments.py "$graphs" "${modules[@]}"

# The public surface is pinned (Tests/PublicSurface/<Module>.txt): a symbol made public, or no
# longer public, by accident fails here with the diff.
# The lists are Linux's symbol graphs (what CI builds); elsewhere the check is skipped.
echo "==> public surface (scripts/check_public_surface.py)"
python3 scripts/check_public_surface.py --self-test
if [ "$(uname -s)" = Linux ]; then
    python3 scripts/check_public_surface.py "$graphs" "${modules[@]}"
else
    echo "skipped: Tests/PublicSurface pins the Linux surface"
fi

# One module's archive; its log is printed whole when it is done.
convert() {  # MODULE
    local module=$1 input=.build/docs/symbolgraphs/$1 catalog=()
    rm -rf "$input" && mkdir -p "$input"
    cp "$graphs/$module.symbols.json" "$input/"
    for extension in "$graphs/$module"@*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$input/"
    done
    [ -d "Sources/$module/$module.docc" ] && catalog=("Sources/$module/$module.docc")
    docc convert "${catalog[@]}" \
        --additional-symbol-graph-dir "$input" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.swift-cipher-station.$module" \
        --output-path ".build/docs/$module.doccarchive" \
        --warnings-as-errors
}

# Two conversions at a time (a machine's two cores; each is mostly one thread); every log is
# printed whole at the end, and a failure of any fails the script once all have ended.
mkdir -p .build/docs
running=() failed=0
for module in "${modules[@]}"; do
    if [ ${#running[@]} -ge 2 ]; then
        wait "${running[0]}" || failed=1
        running=("${running[@]:1}")
    fi
    ( echo "==> docc convert $module"; convert "$module" ) > ".build/docs/$module.log" 2>&1 &
    running+=("$!")
done
for pid in "${running[@]}"; do wait "$pid" || failed=1; done
for module in "${modules[@]}"; do cat ".build/docs/$module.log"; done
[ "$failed" -eq 0 ] || { echo "a docc conversion failed (its log is above)" >&2; exit 1; }
echo "documentation: ${#modules[@]} modules built, no warnings"
