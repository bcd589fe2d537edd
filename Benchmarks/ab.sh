#!/usr/bin/env bash
# A/B of the post-quantum operations against an earlier commit, in one run:
#   bash Benchmarks/ab.sh 3d01096 [ROUNDS] [--filter mldsa]
# Builds cipher-bench of that commit in its own worktree (.build/ab/<commit>) and of this
# checkout, both in release mode, then runs Benchmarks/ab.py on the two.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: ab.sh COMMIT [ROUNDS] [--filter PREFIX]}
shift
commit=$(git rev-parse --short "$base")
tree=.build/ab/$commit
if [ ! -d "$tree" ]; then
    git worktree add --detach "$tree" "$commit" >/dev/null
fi
(cd "$tree" && swift build -c release --product cipher-bench >/dev/null)
swift build -c release --product cipher-bench >/dev/null
python3 Benchmarks/ab.py "$tree/.build/release/cipher-bench" .build/release/cipher-bench "$@"
