#!/usr/bin/env python3
"""Fails when shipped Swift code would not build on Apple platforms.

This machine builds only for Linux, so Apple support is kept true by construction. In every Swift
file under the given folders (default: Sources, Examples, Benchmarks) it refuses:

- a `Glibc.`-qualified name anywhere;
- `import Glibc` outside an `#if canImport(Glibc)` / `#if os(Linux)` branch of a block that also
  has a branch for Darwin (`#else`, or `#elseif canImport(Darwin)` / `os(macOS)` …);
- a Linux-only name (MSG_NOSIGNAL, st_mtim, getrandom, SOCK_STREAM.rawValue, O_TMPFILE, epoll,
  /proc/) outside such a branch.

Comments are ignored. Prints one line per finding and exits 1 when there is any.
"""
import re
import sys
from pathlib import Path

from _common import report

LINUX_ONLY = ["MSG_NOSIGNAL", "st_mtim", "getrandom", "SOCK_STREAM.rawValue", "O_TMPFILE", "epoll", "/proc/"]
LINUX_CONDITION = re.compile(r"canImport\(\s*Glibc\s*\)|os\(\s*Linux\s*\)")
DARWIN_CONDITION = re.compile(r"canImport\(\s*Darwin\s*\)|os\(\s*(macOS|iOS|tvOS|watchOS|visionOS)\s*\)")


def strip_comments(lines):
    """The lines with comments blanked (block comments may span lines); string contents stay."""
    out, in_block = [], False
    for line in lines:
        result, i = "", 0
        in_string = False
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                    break
                in_block, i = False, end + 2
                continue
            ch = line[i]
            if in_string:
                result += ch
                if ch == "\\" and i + 1 < len(line):
                    result += line[i + 1]
                    i += 2
                    continue
                if ch == '"':
                    in_string = False
                i += 1
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            if ch == '"':
                in_string = True
            result += ch
            i += 1
        out.append(result)
    return out


class Block:
    """One `#if … #endif` block: its branches as (condition or None for #else, first line, last line)."""

    def __init__(self):
        self.branches = []

    @property
    def covers_darwin(self):
        return any(cond is None or DARWIN_CONDITION.search(cond) for cond, _, _ in self.branches)


def blocks_of(lines):
    """Every block, with its branch ranges, found by one pass over the directive lines."""
    stack, blocks = [], []
    for number, line in enumerate(lines):
        text = line.strip()
        if text.startswith("#if ") or text.startswith("#if("):
            block = Block()
            block.branches.append([text[3:].strip(), number, None])
            stack.append(block)
        elif text.startswith("#elseif") and stack:
            stack[-1].branches[-1][2] = number
            stack[-1].branches.append([text[len("#elseif"):].strip(), number, None])
        elif text.startswith("#else") and stack:
            stack[-1].branches[-1][2] = number
            stack[-1].branches.append([None, number, None])
        elif text.startswith("#endif") and stack:
            block = stack.pop()
            block.branches[-1][2] = number
            blocks.append(block)
    return blocks


def guarded(number, blocks):
    """Whether line `number` sits in a Linux branch of a block that also has a Darwin branch: a
    Linux-conditioned branch, or the `#else` of a block whose earlier branch is Darwin's."""
    for block in blocks:
        if not block.covers_darwin:
            continue
        darwin_before = False
        for cond, first, last in block.branches:
            inside = first < number < last
            if cond is None:
                if inside and darwin_before:
                    return True
            elif LINUX_CONDITION.search(cond):
                if inside:
                    return True
            elif DARWIN_CONDITION.search(cond):
                darwin_before = True
    return False


def check(path):
    raw = path.read_text(encoding="utf-8", errors="replace").splitlines()
    lines = strip_comments(raw)
    blocks = blocks_of(lines)
    findings = []
    for number, line in enumerate(lines):
        if re.search(r"\bGlibc\.", line):
            findings.append((number, "a Glibc-qualified name (call the function unqualified, imported per platform)"))
        if re.match(r"\s*(@\w+\s+)*import\s+Glibc\b", line) and not guarded(number, blocks):
            findings.append((number, "`import Glibc` without a Darwin branch beside it"))
        for name in LINUX_ONLY:
            pattern = re.escape(name) if not name[0].isalnum() else r"\b" + re.escape(name) + r"(?![A-Za-z0-9_])"
            if re.search(pattern, line) and not guarded(number, blocks):
                findings.append((number, f"Linux-only `{name}` outside a Linux branch with a Darwin #else"))
    return [f"{path}:{number + 1}: {message}" for number, message in findings]


SELF_TEST = [
    # (snippet, findings expected)
    ("import Glibc\n", 1),
    ("#if canImport(Glibc)\nimport Glibc\n#endif\n", 1),
    ("#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Darwin)\nimport Darwin\n#endif\n", 0),
    ("let n = Glibc.send(fd, p, c, 0)\n", 1),
    ("// Glibc.send in a comment, MSG_NOSIGNAL too\n", 0),
    ("let f = Int32(MSG_NOSIGNAL)\n", 1),
    ("#if canImport(Glibc)\nlet f = Int32(MSG_NOSIGNAL)\n#else\nlet f: Int32 = 0\n#endif\n", 0),
    ("#if os(Linux)\nlet f = Int32(MSG_NOSIGNAL)\n#endif\n", 1),
    ("#if canImport(Darwin)\nlet m = s.st_mtimespec\n#else\nlet m = s.st_mtim\n#endif\n", 0),
    ("#if canImport(Darwin)\nlet m = s.st_mtimespec\n#endif\n", 0),
    ("let m = s.st_mtim\n", 1),
    ("let p = \"/proc/self/status\"\n", 1),
    ("#if DEBUG\nlet r = getrandom(p, 32, 0)\n#else\nlet r = 0\n#endif\n", 1),
    ("#if canImport(Glibc)\n#if DEBUG\nlet e = epoll_create1(0)\n#endif\n#else\nlet e = kqueue()\n#endif\n", 0),
]


def self_test():
    """Checks the checker on small snippets; returns the number of wrong verdicts."""
    import tempfile
    wrong = 0
    with tempfile.TemporaryDirectory() as folder:
        for index, (snippet, expected) in enumerate(SELF_TEST):
            path = Path(folder) / f"case{index}.swift"
            path.write_text(snippet)
            found = len(check(path))
            if found != expected:
                wrong += 1
                print(f"self-test case {index}: {found} finding(s), expected {expected}:\n{snippet}")
    return wrong


def main(argv):
    if argv[:1] == ["--self-test"]:
        wrong = self_test()
        print(f"platform guards self-test: {len(SELF_TEST) - wrong} passed, {wrong} failed")
        return 1 if wrong else 0
    roots = [Path(arg) for arg in argv] or [Path("Sources"), Path("Examples"), Path("Benchmarks")]
    findings = []
    count = 0
    for root in roots:
        for path in sorted(root.rglob("*.swift")):
            count += 1
            findings += check(path)
    return report(findings, f"platform guards: {len(findings)} finding(s) in {count} files",
                  f"platform guards: {count} files, every Linux-only call has its Darwin branch")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
