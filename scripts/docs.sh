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

for module in "${modules[@]}"; do
    echo "==> docc convert $module"
    input=.build/docs/symbolgraphs/$module
    rm -rf "$input" && mkdir -p "$input"
    cp "$graphs/$module.symbols.json" "$input/"
    for extension in "$graphs/$module"@*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$input/"
    done
    catalog=()
    [ -d "Sources/$module/$module.docc" ] && catalog=("Sources/$module/$module.docc")
    docc convert "${catalog[@]}" \
        --additional-symbol-graph-dir "$input" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.swift-cipher-station.$module" \
        --output-path ".build/docs/$module.doccarchive" \
        --warnings-as-errors
done
echo "documentation: ${#modules[@]} modules built, no warnings"
