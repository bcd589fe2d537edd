#!/usr/bin/env bash
# Installs the Debian packages the SDK builds against (libsodium, libcurl, libcrypto) and the tests use
# (openssl; nghttpx from nghttp2-proxy, the HTTP/2 TLS front) when they are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and stops.
set -euo pipefail
missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists libsodium || missing+=(libsodium-dev)
    pkg-config --exists libcurl || missing+=(libcurl4-openssl-dev)
    pkg-config --exists libcrypto || missing+=(libssl-dev)
else
    missing+=(libsodium-dev libcurl4-openssl-dev libssl-dev)
fi
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# nghttpx lives in /usr/sbin, which a non-root PATH may lack.
command -v nghttpx >/dev/null 2>&1 || [ -x /usr/sbin/nghttpx ] || missing+=(nghttp2-proxy)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
    echo "==> installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
else
    echo "Missing system packages. Run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
