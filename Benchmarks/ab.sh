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
# cipher-bench is in Benchmarks/Package.swift since the benchmarks left the root package; an
# earlier commit builds it from its root package.
build_bench() {  # prints the built binary's path
    if [ -f "$1/Benchmarks/Package.swift" ]; then
        (cd "$1" && swift build -c release --package-path Benchmarks --product cipher-bench >/dev/null) && echo "$1/Benchmarks/.build/release/cipher-bench"
    else
        (cd "$1" && swift build -c release --product cipher-bench >/dev/null) && echo "$1/.build/release/cipher-bench"
    fi
}
base_bin=$(build_bench "$tree")
this_bin=$(build_bench .)
python3 Benchmarks/ab.py "$base_bin" "$this_bin" "$@"
