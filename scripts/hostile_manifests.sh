#!/usr/bin/env bash
# The hostile-station check of issues 27 and 34 with the real sizes (the counts are tested with small
# numbers in Tests/StationClientTests/ManifestCapsTests.swift): builds the release `cipher` and
# `cipher-station-emulator`, then runs scripts/hostile_manifests.py, which serves the hostile
# manifests through a proxy in front of the emulator and prints, for each `cipher ls`, the wall
# time (<= 60 s), the peak RSS of the whole process (<= 512 MiB), the /rewrap calls and the
# outcome. Not part of the test command: it takes a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product cipher-station-emulator
swift build -c release --product cipher
exec python3 scripts/hostile_manifests.py "$(swift build -c release --show-bin-path)"
