#!/usr/bin/env python3
"""Fails when Swift code would not build on Apple platforms.

This machine builds only for Linux, so Apple support is kept true by construction. In every Swift
file under the given folders (default: Sources, Examples, Benchmarks, Tests) it refuses:

- a `Glibc.`-qualified name anywhere;
- `import Glibc` outside an `#if canImport(Glibc)` / `#if os(Linux)` branch of a block that also
  has a branch for Darwin (`#else`, or `#elseif canImport(Darwin)` / `os(macOS)` …);
- a Linux-only name (MSG_NOSIGNAL, st_mtim, getrandom, SOCK_STREAM.rawValue, O_TMPFILE, epoll,
  /proc/) outside such a branch;
- starting a program (`Process`, `posix_spawn…`, `fork`, `vfork`, `execv…`) outside a branch
  that only macOS and Linux compile (`#if os(macOS) || os(Linux)`, `#if os(Linux)`,
  `#if canImport(Glibc)` …): iOS, tvOS, watchOS and visionOS have no `Process`, and an app
  may not spawn. Benchmarks is exempt: a package of command-line tools of its own, for macOS and
  Linux, which no simulator job builds.

Under Tests, which may hold Linux-only tests, the Darwin branch beside a Linux one is not
required: a Linux-only name, `import Glibc` or a `Glibc.`-qualified name needs only a Linux
branch, and `/proc/` (a path, which builds everywhere) is not looked for.

Comments are ignored, and string contents when looking for a program start. Prints one line per
finding and exits 1 when there is any.
"""
import re
import sys
from pathlib import Path

from _common import report

LINUX_ONLY = ["MSG_NOSIGNAL", "st_mtim", "getrandom", "SOCK_STREAM.rawValue", "O_TMPFILE", "epoll", "/proc/"]
LINUX_CONDITION = re.compile(r"canImport\(\s*Glibc\s*\)|os\(\s*Linux\s*\)")
# Starting a program; `.execv(` (a Python string's os.execv, a method) is no call of libc's.
SPAWN = re.compile(r"\bProcess\b|\bposix_spawn\w*|(?<![.\w])(v?fork|exec[vl]\w*)\s*\(")
# A platform where a program can be started (macOS's and Linux's libcs, Foundation's Process).
SPAWNING_PLATFORM = re.compile(r"os\(macOS\)|os\(Linux\)|canImport\(Glibc\)")
SPAWN_EXEMPT_ROOTS = {"Benchmarks"}
DEFAULT_ROOTS = ["Sources", "Examples", "Benchmarks", "Tests"]
DARWIN_CONDITION = re.compile(r"canImport\(\s*Darwin\s*\)|os\(\s*(macOS|iOS|tvOS|watchOS|visionOS)\s*\)")


def strip_comments(lines):
    """The lines with comments blanked (block comments may span lines); string contents stay."""
    out, in_block = [], False
    for line in lines:
        # Most lines hold no comment: nothing to blank.
        if not in_block and "/" not in line:
            out.append(line)
            continue
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


STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def without_strings(lines):
    """The lines with string-literal contents blanked, multi-line (\"\"\") literals included."""
    out, in_multiline = [], False
    for line in lines:
        if not in_multiline and '"""' not in line:
            out.append(STRING.sub('""', line) if '"' in line else line)
            continue
        result, i = "", 0
        while i < len(line):
            if line.startswith('"""', i):
                in_multiline, i = not in_multiline, i + 3
                result += '""'
                continue
            if in_multiline:
                i += 1
                continue
            if line[i] == '"':
                end = i + 1
                while end < len(line) and line[end] != '"':
                    end += 2 if line[end] == "\\" else 1
                result, i = result + '""', end + 1
                continue
            result += line[i]
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


def spawning_condition(condition):
    """Whether only macOS and Linux compile a branch of `condition`: each `||` alternative names one of them."""
    text = re.sub(r"\s+", "", condition or "")
    if not text or "!" in text or "(" in text.replace("os(", "").replace("canImport(", ""):
        return False
    return all(SPAWNING_PLATFORM.search(alternative) for alternative in text.split("||"))


def in_branch(number, blocks, accepts):
    """Whether line `number` sits in a branch (not an `#else`) whose condition `accepts`."""
    return any(cond is not None and first < number < last and accepts(cond)
               for block in blocks for cond, first, last in block.branches)


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


def check(path, tests=False, spawn=True):
    """Findings in one file; `tests`: the rules for Tests; `spawn`: look for program starts."""
    raw = path.read_text(encoding="utf-8", errors="replace").splitlines()
    lines = strip_comments(raw)
    blocks = blocks_of(lines)
    if tests:
        def linux(number):
            return in_branch(number, blocks, LINUX_CONDITION.search)
    else:
        def linux(number):
            return guarded(number, blocks)
    findings = []
    for number, line in enumerate(lines):
        if re.search(r"\bGlibc\.", line) and not (tests and linux(number)):
            findings.append((number, "a Glibc-qualified name (call the function unqualified, imported per platform)"))
        if re.match(r"\s*(@\w+\s+)*import\s+Glibc\b", line) and not linux(number):
            findings.append((number, "`import Glibc` outside a Linux branch" if tests else "`import Glibc` without a Darwin branch beside it"))
        for name in LINUX_ONLY:
            if tests and name == "/proc/":
                continue
            pattern = re.escape(name) if not name[0].isalnum() else r"\b" + re.escape(name) + r"(?![A-Za-z0-9_])"
            if re.search(pattern, line) and not linux(number):
                findings.append((number, f"Linux-only `{name}` outside a Linux branch" if tests
                                 else f"Linux-only `{name}` outside a Linux branch with a Darwin #else"))
    if spawn and SPAWN.search("\n".join(lines)):  # most files start nothing: no second pass
        for number, line in enumerate(without_strings(lines)):
            match = SPAWN.search(line)
            if match and not in_branch(number, blocks, spawning_condition):
                findings.append((number, f"`{match.group(0).rstrip('( ')}` starts a program outside an "
                                         "`#if os(macOS) || os(Linux)` branch (iOS, tvOS, watchOS and visionOS start none)"))
    return [f"{path}:{number + 1}: {message}" for number, message in findings]


def scan(roots):
    """(findings, files read) for every Swift file under `roots`, each with its root's rules."""
    findings, count = [], 0
    for root in roots:
        for path in sorted(root.rglob("*.swift")):
            count += 1
            findings += check(path, tests=root.name == "Tests", spawn=root.name not in SPAWN_EXEMPT_ROOTS)
    return findings, count


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
    # Starting a program.
    ("let p = Process()\n", 1),
    ("var pid = pid_t()\n_ = posix_spawn(&pid, path, nil, nil, argv, nil)\n", 1),
    ("let child = fork()\n", 1),
    ("#if os(macOS) || os(Linux)\nlet p = Process()\n#endif\n", 0),
    ("#if os(Linux)\nlet p = Process()\n#else\nlet p: Int? = nil\n#endif\n", 0),
    ("#if canImport(Darwin)\nlet p = Process()\n#endif\n", 1),
    ("#if os(macOS) || os(iOS)\nlet p = Process()\n#endif\n", 1),
    ("#if !os(iOS)\nlet p = Process()\n#endif\n", 1),
    ("#if os(iOS)\nlet p = 0\n#else\nlet p = Process()\n#endif\n", 1),
    ("#if os(Linux)\n#if DEBUG\nlet p = Process()\n#endif\n#endif\n", 0),
    ("let info = ProcessInfo.processInfo // a Process in a comment\nlet s = \"Process()\"\n", 0),
    ("let script = \"\"\"\nos.execv(a, b)\nProcess()\n\"\"\"\nlet t = CLIProcess.run()\n", 0),
]
# Under Tests: Linux-only code needs a Linux branch, not a Darwin one beside it.
SELF_TEST_TESTS = [
    ("#if canImport(Glibc)\nimport Glibc\n#endif\n", 0),
    ("import Glibc\n", 1),
    ("#if os(Linux)\nlet n = Glibc.close(fd)\n#endif\n", 0),
    ("let n = Glibc.close(fd)\n", 1),
    ("let f = Int32(MSG_NOSIGNAL)\n", 1),
    ("let fds = \"/proc/self/fd\"\n", 0),
    ("let p = Process()\n", 1),
]


def self_test():
    """Checks the checker on small snippets and on files of Tests with programs planted in them;
    returns the number of wrong verdicts."""
    import shutil
    import tempfile
    wrong = 0
    with tempfile.TemporaryDirectory() as folder:
        for cases, tests in ((SELF_TEST, False), (SELF_TEST_TESTS, True)):
            for index, (snippet, expected) in enumerate(cases):
                path = Path(folder) / f"case{index}.swift"
                path.write_text(snippet)
                found = len(check(path, tests=tests))
                if found != expected:
                    wrong += 1
                    print(f"self-test case {index}{' (Tests)' if tests else ''}: {found} finding(s), expected {expected}:\n{snippet}")
        # Files of Tests, copied under a Tests root: clean as they are (Linux-only code in a Linux
        # branch with no Darwin one is fine there), then two with a program started outside a guard.
        helper = Path("Tests/TestSupport/PipedProcess.swift")
        test = Path("Tests/ClassicalCryptoTests/Argon2Tests.swift")
        for original in (helper, test, Path("Tests/TransportTestSupport/FullListener.swift")):
            (Path(folder) / original).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(original, Path(folder) / original)
        roots = [Path(folder) / root for root in DEFAULT_ROOTS]  # as the default run reads them
        before = scan(roots)[0]
        planted = Path(folder) / helper
        planted.write_text(planted.read_text() + "\nfunc unguarded() throws { try Process.run(URL(fileURLWithPath: \"/bin/true\"), arguments: []) }\n")
        planted = Path(folder) / test
        planted.write_text(planted.read_text() + "\n#if canImport(Darwin)\nlet planted = posix_spawn(nil, \"/bin/true\", nil, nil, nil, nil)\n#endif\n")
        after = scan(roots)[0]
        caught = {Path(finding.split(":")[0]).name for finding in after}
        if before or caught != {helper.name, test.name} or len(after) != 2:
            wrong += 1
            print(f"self-test on files of Tests: before {before}, after planting {after}")
    return wrong


def main(argv):
    if argv[:1] == ["--self-test"]:
        wrong = self_test()
        total = len(SELF_TEST) + len(SELF_TEST_TESTS) + 1
        print(f"platform guards self-test: {total - wrong} passed, {wrong} failed")
        return 1 if wrong else 0
    roots = [Path(arg) for arg in argv or DEFAULT_ROOTS]
    findings, count = scan(roots)
    return report(findings, f"platform guards: {len(findings)} finding(s) in {count} files",
                  f"platform guards: {count} files, every Linux-only call in a Linux branch (beside a Darwin one outside Tests), "
                  "every program start in a macOS/Linux branch")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
