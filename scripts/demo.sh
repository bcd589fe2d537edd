#!/usr/bin/env bash
# The one command for a first look: installs the system packages the SDK needs (libsodium,
# libcurl; apt-get as root, otherwise it prints the command), builds the `cipher` command line
# and runs `cipher demo`: pairing, signed calls, publishing, listing, downloading, following and
# a second app's namespace, against an embedded StationEmulator, with timings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-system-deps.sh
swift build --product cipher
exec "$(swift build --show-bin-path)/cipher" demo "$@"
