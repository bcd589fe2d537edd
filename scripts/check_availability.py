#!/usr/bin/env python3
"""Fails when shipped Swift code uses standard-library API newer than the package's Apple floor.

This machine builds only for Linux, where every stdlib API is available whatever its Apple
annotation says, so a use of (say) `Synchronization.Mutex` compiles here and breaks the first
Apple build with a deployment target below macOS 15. This script reads the floor from
Package.swift (`platforms: [.macOS(.v13), .iOS("16.0"), ...]`, or `--floor macOS=13,iOS=16,...`),
collects every declaration of the toolchain's own stdlib interfaces (`<toolchain>/lib/swift/linux/
<Module>.swiftmodule/<arch>-unknown-linux-gnu.swiftinterface` for Swift, _Concurrency,
Synchronization, _StringProcessing, RegexBuilder, Observation, Distributed) whose `@available`
(shorthand, `introduced:` long form, or `SwiftStdlib X.Y` macro; an extension's or enclosing
type's availability applies to its members) is above the floor on some Apple platform, and scans
every `.swift` file under Sources/ (plus `--also DIR ...`) for uses of those APIs that are not
inside an availability guard (`if`/`while`/`guard #available(...)`, the `else` of
`#unavailable`, or a declaration annotated `@available(macOS X, ...)` with X high enough, or
`@available(*, unavailable)`). Code in `#if` branches that cannot be active on any Apple platform
(`#if canImport(Glibc)`, `os(Linux)`, `canImport(FoundationEssentials)`, ...) is skipped, and a
branch only active on some Apple platforms (`#if os(macOS)`) is checked only for those.

What is matched (lexically, after blanking comments and string literals; interpolations stay):
- a type (struct/class/enum/protocol/actor/typealias) as an identifier token (`InlineArray<`,
  `: Mutex`, `Atomic<`, `UInt128`, `Synchronization.Mutex`), when every stdlib type of that simple
  name is newer than the floor (so nested names such as `Iterator` or `Element` never match);
- a global function followed by `(` or a trailing `{` (`withDiscardingTaskGroup(`);
- an initializer `Type(label: ..., label2: ...)` with at least one argument label, when a newer
  init of that type accepts the call's labels and no older one does (`String(validating:as:)`,
  `Task(executorPreference:)`); unlabeled `Type(x)` calls are not judged;
- a member `.name(labels...)` / `.name`, only when no declaration of that base name anywhere in
  the stdlib interfaces that accepts the call's labels is available at the floor (for `.name`
  without a call: every declaration of that name is newer). So `.addTask(name:)` is caught
  (no older overload takes `name:`) while `.count` never is.
- a typed-throws *function type* whose metadata may be needed at run time (Apple's runtime knows
  such types only from macOS 15 / iOS 18 / tvOS 18 / watchOS 11 / visionOS 2): the type of a
  `let`/`var` (stored or local), an enum payload, an Optional (`(() throws(E) -> T)?`), a
  collection element (`[() throws(E) -> Void]`), a generic argument (`Result<() throws(E) -> T,
  F>`), a tuple element or closure parameter of any of those, and uses of a typealias that
  names such a type in those positions. Not flagged: a function or closure *parameter* whose type
  is a typed-throws closure (`func f<E>(_ body: () throws(E) -> R) throws(E)`), the typed throws
  of a declaration itself (`func g() throws(E)`), closure literals (`{ () throws(E) in ... }`),
  `do throws(E)`, and `throws(Never)` / `throws(any Error)`.
- the package's own types and functions annotated `@available(macOS X, ...)` above the floor
  (the Linux compiler ignores Apple availability, so their unguarded uses slip through too),
  when every package declaration of that name carries such an annotation.
Names the package declares itself are the package's, not the stdlib's: types declared in a target
(`class|struct|enum|protocol|typealias|actor|associatedtype NAME`), or declared `public` in any
target, are not matched as types there (unless qualified, `Synchronization.Mutex`); function,
property and case names declared anywhere in the scanned files are not matched as members or
global functions. Member names that also occur in the binary Foundation/Dispatch .swiftmodule
files (e.g. `.second` of `Calendar.Component`, `.withLock` of `NSLocking`) are not matched either.
A finding guarded for only some platforms (`if #available(macOS 15, *)`) names the others.

What it cannot see:
- Foundation, Dispatch and the other corelibs have no .swiftinterface on Linux (and differ from
  Apple's Foundation anyway); Apple-only frameworks are not on this machine at all.
- It is lexical, not semantic: no type checking, no overload resolution beyond argument labels,
  no inference. A member used through implicit `self` (inside an extension of a stdlib type), an
  API reached through type inference (`let m = make()` where `make` returns a new type), a
  protocol requirement satisfied by a new default implementation, generic parameters that
  shadow a stdlib name, and new conformances of old types (`extension Int: SomeNewProtocol`
  in the stdlib, used implicitly) are all invisible.
- Member-level availability is only partly covered: a member whose base name and labels also
  fit an older declaration anywhere in the stdlib (an overload of the same name introduced at a
  different OS version, e.g. a new `withTaskGroup(of:returning:isolation:body:)` next to the old
  one), whose name occurs in Foundation/Dispatch, or that the package also declares, is not
  reported (so `Task.sleep(for:)`, `Thread.sleep` sharing the name, is missed below macOS 13).
- Package-declared names are excluded by name, not scope: a target's own `Mutex` hides
  `Synchronization.Mutex` (unqualified) in that whole target.
- Unlabeled initializer overloads (`Int(someInt128)`) and operators are not checked.
- `@backDeployed` APIs count as available from their `@available` version (correct: they work on
  older OSes). visionOS, when an annotation omits it, is inferred from iOS (iOS 17 = visionOS 1).
- Guards are recognised syntactically (`if`/`while`/`guard` `#available(...)`, `@available` on the
  enclosing declaration); availability inherited from a caller, or an `@available` on a protocol
  that the enclosing type conforms to, is not.
- The typed-throws check is a heuristic over brackets: a function type returned by a function
  type, or a typed-throws closure passed as a generic argument by inference, is not seen.

Prints `path:line: <API> needs <OS versions> (floor <floor>)` per finding and a summary; exits 1
when there is any finding, 0 otherwise, 2 on a usage error. `--self-test` runs the checker on a
planted Sources tree and exits 0 only if every expectation holds.
"""
from __future__ import annotations

import argparse
import bisect
import os
import platform as host_platform
import re
import shutil
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

APPLE = ("macOS", "iOS", "tvOS", "watchOS", "visionOS")
PLATFORM_ALIASES = {"macOS": "macOS", "OSX": "macOS", "macosx": "macOS", "iOS": "iOS", "tvOS": "tvOS",
                    "watchOS": "watchOS", "visionOS": "visionOS", "xrOS": "visionOS"}
INF = (9999,)

# From swiftlang/swift utils/availability-macros.def (the stdlib's `@available(SwiftStdlib X.Y, *)`).
# The installed interfaces print these expanded, but a toolchain could keep the macro form.
STDLIB_MACROS = {
    "5.0": "macOS 10.14.4, iOS 12.2, watchOS 5.2, tvOS 12.2",
    "5.1": "macOS 10.15, iOS 13.0, watchOS 6.0, tvOS 13.0",
    "5.2": "macOS 10.15.4, iOS 13.4, watchOS 6.2, tvOS 13.4",
    "5.3": "macOS 11.0, iOS 14.0, watchOS 7.0, tvOS 14.0",
    "5.4": "macOS 11.3, iOS 14.5, watchOS 7.4, tvOS 14.5",
    "5.5": "macOS 12.0, iOS 15.0, watchOS 8.0, tvOS 15.0",
    "5.6": "macOS 12.3, iOS 15.4, watchOS 8.5, tvOS 15.4",
    "5.7": "macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0",
    "5.8": "macOS 13.3, iOS 16.4, watchOS 9.4, tvOS 16.4",
    "5.9": "macOS 14.0, iOS 17.0, watchOS 10.0, tvOS 17.0",
    "5.10": "macOS 14.4, iOS 17.4, watchOS 10.4, tvOS 17.4, visionOS 1.1",
    "6.0": "macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0",
    "6.1": "macOS 15.4, iOS 18.4, watchOS 11.4, tvOS 18.4, visionOS 2.4",
    "6.2": "macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0",
    "6.3": "macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4",
}
# SwiftPM's defaults when Package.swift names no version for a platform (tools 5.9+).
SWIFTPM_DEFAULT_FLOOR = {"macOS": (10, 13), "iOS": (12, 0), "tvOS": (12, 0), "watchOS": (4, 0), "visionOS": (1, 0)}
MODULES = ("Swift", "_Concurrency", "Synchronization", "_StringProcessing", "RegexBuilder", "Observation",
           "Distributed")
MODULE_PREFIXES = set(MODULES) | {"SwiftShims", "_SynchronizationShims", "_RegexParser", "Darwin", "Glibc"}

DECL_KW = {"func", "init", "var", "let", "subscript", "typealias", "struct", "class", "enum", "protocol",
           "extension", "actor", "associatedtype", "case", "deinit", "operator", "precedencegroup", "import", "macro"}
TYPE_DECL_KW = {"struct", "class", "enum", "protocol", "extension", "actor"}
NOMINAL_KW = {"struct", "class", "enum", "protocol", "actor", "typealias", "associatedtype"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# ----------------------------------------------------------------------------- versions

def parse_version(text):
    parts = [int(p) for p in re.findall(r"\d+", text)]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts) or (0,)


def vstr(v):
    if v == INF:
        return "never"
    return ".".join(str(p) for p in (v if len(v) > 1 else v + (0,)))


def infer_vision(req):
    """visionOS availability implied by an iOS one (iOS 17 ~ visionOS 1) when not spelled out."""
    if "visionOS" not in req and "iOS" in req:
        ios = req["iOS"]
        req["visionOS"] = (ios[0] - 16,) + ios[1:] if ios != INF and ios[0] >= 18 else (1,)
    return req


def parse_availability(args):
    """One `@available(...)`/`#available(...)` argument text -> (introduced {platform: version},
    unavailable platform set) or None when it says nothing about Apple OS versions."""
    parts = [p.strip() for p in split_top(args, ",")]
    if not parts:
        return None
    first = parts[0]
    if first == "*":
        if any(p == "unavailable" for p in parts[1:]):
            return {}, set(APPLE)
        return None
    if first.split()[0] in ("swift", "_PackageDescription"):
        return None
    intro, unavail = {}, set()
    bare = PLATFORM_ALIASES.get(first)
    if bare is not None or re.fullmatch(r"[A-Za-z]\w*", first):
        # long form: `macOS, introduced: 15.0, deprecated: ...` / `macOS, unavailable`
        plat = bare
        for p in parts[1:]:
            m = re.fullmatch(r"introduced\s*:\s*([\d.]+)", p)
            if m and plat:
                intro[plat] = parse_version(m.group(1))
            elif p == "unavailable" and plat:
                unavail.add(plat)
        if not intro and not unavail:
            return None
        return intro, unavail
    for p in parts:
        m = re.fullmatch(r"SwiftStdlib\s+([\d.]+)", p)
        if m and m.group(1) in STDLIB_MACROS:
            for q in STDLIB_MACROS[m.group(1)].split(","):
                name, ver = q.split()
                intro[name] = max(intro.get(name, (0,)), parse_version(ver))
            continue
        m = re.fullmatch(r"(\w+)\s+([\d.]+)", p)
        if m and m.group(1) in PLATFORM_ALIASES:
            name = PLATFORM_ALIASES[m.group(1)]
            intro[name] = max(intro.get(name, (0,)), parse_version(m.group(2)))
    if not intro:
        return None
    return intro, unavail


def merge_req(a, b):
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, (0,)), v)
    return out


def above_floor(req, floor, platforms=APPLE):
    return [p for p in platforms if p in req and req[p] > floor.get(p, (0,))]


def req_key(req):
    return tuple(req.get(p, (0,)) for p in APPLE)


def fmt_req(req):
    return ", ".join(f"{p} {vstr(req[p])}" for p in APPLE if p in req)


def fmt_floor(floor):
    return ", ".join(f"{p} {vstr(floor[p])}" for p in APPLE if p in floor)


# ----------------------------------------------------------------------------- lexing

RAW_OPEN = re.compile(r'(#*)("""|")')
CODE_STOP = re.compile(r'[/"#]')
INTERP_STOP = re.compile(r'[/"#()]')
NOT_NL = re.compile(r"[^\n]")


def strip_swift(src):
    """`src` with comments and string-literal contents blanked (same length, newlines kept);
    the quotes and the code of `\\(...)` interpolations stay."""
    out = []
    n = len(src)
    i = 0
    modes = [("code", False, [0])]
    str_stops = {}
    while i < n:
        mode = modes[-1]
        if mode[0] == "code":
            m = (INTERP_STOP if mode[1] else CODE_STOP).search(src, i)
            if not m:
                out.append(src[i:])
                break
            j = m.start()
            if j > i:
                out.append(src[i:j])
                i = j
            c = src[i]
            if c == "/" and src.startswith("//", i):
                j = src.find("\n", i)
                j = n if j < 0 else j
                out.append(" " * (j - i))
                i = j
                continue
            if c == "/" and src.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    a, b = src.find("/*", j), src.find("*/", j)
                    if b < 0:
                        j = n
                        break
                    if 0 <= a < b:
                        depth, j = depth + 1, a + 2
                    else:
                        depth, j = depth - 1, b + 2
                out.append(NOT_NL.sub(" ", src[i:j]))
                i = j
                continue
            if c in '#"':
                m = RAW_OPEN.match(src, i)
                if m:
                    hashes = len(m.group(1))
                    out.append(" " * hashes + m.group(2))
                    i = m.end()
                    modes.append(("str", hashes, m.group(2) == '"""'))
                    continue
            if mode[1]:  # inside an interpolation
                if c == "(":
                    mode[2][0] += 1
                elif c == ")":
                    if mode[2][0] == 0:
                        modes.pop()
                        out.append(" ")
                        i += 1
                        continue
                    mode[2][0] -= 1
            out.append(c)
            i += 1
            continue
        _, hashes, multi = mode
        stop = str_stops.get((hashes, multi))
        if stop is None:
            stop = str_stops[(hashes, multi)] = re.compile(r'[\\"]' if multi else r'[\\"\n]')
        m = stop.search(src, i)
        j = m.start() if m else n
        if j > i:
            out.append(NOT_NL.sub(" ", src[i:j]))
            i = j
            if i >= n:
                break
        c = src[i]
        if c == "\\" and src.startswith("#" * hashes, i + 1):
            j = i + 1 + hashes
            if j < n and src[j] == "(":
                out.append(" " * (j + 1 - i))
                i = j + 1
                modes.append(("code", True, [0]))
                continue
            k = min(j + 1, n)
            out.append(NOT_NL.sub(" ", src[i:k]))
            i = k
            continue
        close = ('"""' if multi else '"') + "#" * hashes
        if src.startswith(close, i):
            out.append(close.replace("#", " "))
            i += len(close)
            modes.pop()
            continue
        if c == "\n" and not multi:  # unterminated: give up on this literal
            modes.pop()
            out.append(c)
            i += 1
            continue
        out.append("\n" if c == "\n" else " ")
        i += 1
    result = "".join(out)
    assert len(result) == n
    return result


def split_top(text, sep=","):
    """Split at `sep` outside (), [], {}, <> (a `>` of `->` does not close)."""
    parts, depth, cur = [], 0, []
    for i, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and not (i > 0 and text[i - 1] == "-")):
            depth = max(0, depth - 1)
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


_BRACKET_RES = {}


def match_close(text, i, open_c="(", close_c=")"):
    """Index of the bracket closing the one at text[i] (or len(text))."""
    rx = _BRACKET_RES.get(open_c)
    if rx is None:
        rx = _BRACKET_RES[open_c] = re.compile("[" + re.escape(open_c + close_c) + "]")
    depth = 0
    for m in rx.finditer(text, i):
        if m.group() == open_c:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return len(text)


def skip_ws(text, i):
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


def skip_ws_back(text, i):
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    return i


class LineIndex:
    def __init__(self, text):
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line(self, pos):
        return bisect.bisect_right(self.starts, pos)


# ----------------------------------------------------------------------------- interfaces

@dataclass
class Param:
    label: str
    default: bool
    fn: bool
    variadic: bool


@dataclass
class Decl:
    module: str
    kind: str
    name: str
    owner: str | None
    params: list | None  # None: not callable with a label list (var/let/type)
    req: dict
    public: bool = True

    def signature(self):
        base = f"{self.owner}." if self.owner else ""
        if self.params is not None and self.kind in ("func", "init", "case"):
            labels = "".join(f"{p.label}:" for p in self.params)
            return f"{base}{self.name}({labels})"
        return f"{base}{self.name}"


def parse_params(text):
    """`(label name: Type = d, ...)` contents -> [Param]."""
    params = []
    for part in split_top(text, ","):
        part = part.strip()
        if not part:
            continue
        colon = None
        depth = 0
        for i, c in enumerate(part):
            if c in "([{<":
                depth += 1
            elif c in ")]}" or (c == ">" and part[i - 1:i] != "-"):
                depth -= 1
            elif c == ":" and depth == 0:
                colon = i
                break
        if colon is None:  # enum payload `case x(Int)`
            params.append(Param("_", False, "->" in part, part.endswith("...")))
            continue
        names = part[:colon].split()
        label = names[0] if names else "_"
        typ = part[colon + 1:]
        default = bool(re.search(r"(?<![=!<>])=(?!=)", re.sub(r"\([^()]*\)|<[^<>]*>", "", typ)))
        params.append(Param(label, default, "->" in typ, "..." in typ.split("=")[0]))
    return params


HEADER_RE = re.compile(r"((?:[A-Za-z_]\w*(?:\([^()]*\))?\s+)*?)\b(" + "|".join(sorted(DECL_KW)) + r")\b")


HEADER_STOP = re.compile(r"[()\[\]{}\n]")


def parse_interface(path, module):
    """Every declaration of one .swiftinterface, with its effective availability."""
    raw = Path(path).read_text(encoding="utf-8", errors="replace")
    text = strip_swift(raw)
    n = len(text)
    decls = []
    stack = []  # (owner simple name or None, req, unavailable, skip)
    pending = []  # (name, args)
    pos = 0
    while pos < n:
        pos = skip_ws(text, pos)
        if pos >= n:
            break
        c = text[pos]
        if c == "}":
            if stack:
                stack.pop()
            pending = []
            pos += 1
            continue
        if c == "#":  # #if / #else / #endif lines: both branches are read
            j = text.find("\n", pos)
            pos = n if j < 0 else j
            continue
        if c == ";":
            pos += 1
            continue
        if c == "@":
            m = re.compile(r"@[A-Za-z_][\w.]*").match(text, pos)
            if not m:
                pos += 1
                continue
            end = m.end()
            args = None
            if end < n and text[end] == "(":
                close = match_close(text, end)
                args = text[end + 1:close]
                end = close + 1
            pending.append((m.group(0)[1:], args))
            pos = end
            continue
        # a declaration header: up to `{`, or a newline, outside brackets
        depth, j = 0, n
        for bm in HEADER_STOP.finditer(text, pos):
            ch = bm.group()
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth <= 0:
                j = bm.start()
                break
        header = text[pos:j].strip()
        decl_info = describe_header(header)
        req, unavail, skip = {}, set(), False
        for name, args in pending:
            if name == "available" and args is not None:
                if re.match(r"\s*swift\s*,.*obsoleted", args):
                    skip = True
                got = parse_availability(args)
                if got:
                    req = merge_req(req, got[0])
                    unavail |= got[1]
            elif name == "_spi":
                skip = True
        pending = []
        outer_req, outer_unavail, outer_skip = ({}, set(), False)
        owner = None
        if stack:
            owner, outer_req, outer_unavail, outer_skip = stack[-1]
        eff_req = infer_vision(merge_req(outer_req, infer_vision(dict(req))))
        eff_unavail = unavail | outer_unavail
        eff_skip = skip or outer_skip
        if decl_info:
            kind, names, params, mods, ext_name = decl_info
            public = not (mods & {"internal", "private", "fileprivate"})
            if not eff_skip and not eff_unavail and kind not in ("import", "deinit", "operator", "precedencegroup",
                                                                 "extension", "subscript"):
                for nm in names:
                    decls.append(Decl(module, kind, nm, owner, params, eff_req, public))
                # labels of tuple types in the declaration's type (`components: (seconds:, attoseconds:)`)
                # are member names too: `.attoseconds` on that tuple is not `Duration.attoseconds`.
                after_name = header[header.find(names[0]) + len(names[0]):] if names else ""
                tm = re.search(r"->" if kind == "func" else r":", after_name)
                if tm and kind in ("var", "let", "func"):
                    for label in set(re.findall(r"[(,]\s*([A-Za-z_]\w*)\s*:(?!:)", after_name[tm.end():])):
                        decls.append(Decl(module, "tuple label", label, f"{owner or module}.{names[0]}", None,
                                          eff_req, public))
            if j < n and text[j] == "{":
                if kind in TYPE_DECL_KW:
                    new_owner = ext_name if kind == "extension" else (names[0] if names else None)
                    stack.append((new_owner, eff_req, eff_unavail, eff_skip or not public))
                    pos = j + 1
                    continue
                pos = match_close(text, j, "{", "}") + 1
                continue
        elif j < n and text[j] == "{":
            pos = match_close(text, j, "{", "}") + 1
            continue
        pos = j + 1 if j < n and text[j] == "\n" else j
    return decls


def describe_header(header):
    """(kind, [names], params|None, modifiers, extended simple name) of a declaration header."""
    m = HEADER_RE.match(header)
    if not m:
        return None
    mods = set(re.findall(r"[A-Za-z_]\w*", m.group(1)))
    kind = m.group(2)
    rest = header[m.end():]
    names, params, ext_name = [], None, None
    if kind == "func":
        mm = re.match(r"\s*(`[^`]+`|[A-Za-z_]\w*|[^\s\w(<]+)", rest)
        if not mm:
            return None
        names = [mm.group(1).strip("`")]
        params = params_after(rest, mm.end())
    elif kind == "init":
        names = ["init"]
        params = params_after(rest, 0)
    elif kind in ("var", "let"):
        names = re.findall(r"^\s*`?([A-Za-z_]\w*)", rest)
    elif kind == "case":
        names, params = [], None
        for part in split_top(rest, ","):
            mm = re.match(r"\s*`?([A-Za-z_]\w*)`?\s*(\()?", part)
            if mm:
                names.append(mm.group(1))
                if mm.group(2):
                    params = parse_params(part[mm.end(): match_close(part, mm.end() - 1)])
                else:
                    params = None
    elif kind == "extension":
        mm = re.match(r"\s*([\w.]+)", rest)
        if mm:
            comps = [c for c in mm.group(1).split(".")]
            while len(comps) > 1 and comps[0] in MODULE_PREFIXES:
                comps.pop(0)
            ext_name = comps[-1]
    elif kind in NOMINAL_KW or kind == "macro":
        mm = re.match(r"\s*`?([A-Za-z_]\w*)", rest)
        names = [mm.group(1)] if mm else []
    return kind, names, params, mods, ext_name


def params_after(rest, i):
    i = skip_ws(rest, i)
    if i < len(rest) and rest[i] in "?!":
        i = skip_ws(rest, i + 1)
    if i < len(rest) and rest[i] == "<":
        depth = 0
        while i < len(rest):
            if rest[i] == "<":
                depth += 1
            elif rest[i] == ">" and rest[i - 1] != "-":
                depth -= 1
                if depth == 0:
                    i += 1
                    break
            i += 1
        i = skip_ws(rest, i)
    if i < len(rest) and rest[i] == "(":
        return parse_params(rest[i + 1: match_close(rest, i)])
    return []


def find_interfaces(toolchain=None):
    if toolchain:
        usr = Path(toolchain)
    else:
        swift = shutil.which("swift")
        if not swift:
            raise SystemExit("check_availability: no `swift` on PATH (use --toolchain /path/to/usr)")
        usr = Path(os.path.realpath(swift)).parent.parent
    base = usr / "lib" / "swift" / "linux"
    arch = host_platform.machine() or "x86_64"
    arch = {"arm64": "aarch64", "amd64": "x86_64"}.get(arch, arch)
    found = {}
    for mod in MODULES:
        d = base / f"{mod}.swiftmodule"
        if not d.is_dir():
            continue
        cands = sorted(p for p in d.glob("*.swiftinterface") if ".private." not in p.name)
        pick = next((p for p in cands if p.name.startswith(arch + "-")), cands[0] if cands else None)
        if pick:
            found[mod] = pick
    if "Swift" not in found:
        raise SystemExit(f"check_availability: no Swift.swiftinterface under {base}")
    return usr, found


class StdlibIndex:
    def __init__(self, decls, floor):
        self.floor = floor
        self.new_types = {}      # simple name -> Decl (lowest requirement)
        self.type_names = set()  # every nominal name
        self.globals_new = {}    # func name -> [Decl]
        self.globals_old = {}
        self.members_new = {}    # base name -> [Decl]
        self.members_old = {}
        self.inits_new = {}      # owner -> [Decl]
        self.inits_old = {}
        self.corelibs = set()
        by_type = {}
        for d in decls:
            if not d.public or d.name.startswith("_"):
                continue
            newer = bool(above_floor(d.req, floor))
            if d.kind in NOMINAL_KW:
                by_type.setdefault(d.name, []).append((newer, d))
            elif d.kind == "init":
                if d.owner:
                    (self.inits_new if newer else self.inits_old).setdefault(d.owner, []).append(d)
            elif d.kind in ("func", "var", "let", "case", "macro", "tuple label"):
                if d.owner is None:
                    (self.globals_new if newer else self.globals_old).setdefault(d.name, []).append(d)
                else:
                    (self.members_new if newer else self.members_old).setdefault(d.name, []).append(d)
        for name, items in by_type.items():
            self.type_names.add(name)
            if all(nw for nw, _ in items):
                self.new_types[name] = min((d for _, d in items), key=lambda d: req_key(d.req))

    def counts(self):
        return (len(self.new_types), sum(map(len, self.globals_new.values())),
                sum(map(len, self.members_new.values())), sum(map(len, self.inits_new.values())))


def call_fits(params, labels, trailing):
    """Whether a call with argument `labels` (and a trailing closure or not) can bind to `params`."""
    if params is None:
        return True
    i = j = 0
    while i < len(params):
        p = params[i]
        if j < len(labels) and p.label == labels[j]:
            j += 1
            if p.variadic:
                while j < len(labels) and labels[j] == "_":
                    j += 1
            i += 1
        elif p.default or (trailing and p.fn and j == len(labels)):
            i += 1
        else:
            return False
    return j == len(labels)


# ----------------------------------------------------------------------------- #if evaluation

APPLE_MODULES = {"Darwin", "Foundation", "Dispatch", "ObjectiveC", "Security", "CommonCrypto", "CryptoKit",
                 "Network", "os", "Combine", "Synchronization", "_Concurrency", "Observation", "RegexBuilder",
                 "XCTest", "Testing", "CoreFoundation", "System", "OSLog", "SwiftUI", "Distributed"}
NOT_APPLE_MODULES = {"Glibc", "Musl", "Bionic", "Android", "WinSDK", "ucrt", "CRT", "WASILibc", "FoundationEssentials",
                     "FoundationInternationalization", "FoundationNetworking", "FoundationXML"}


def eval_condition(cond, plat):
    """Three-valued (True/False/None) value of an `#if` condition on one Apple platform."""
    toks = re.findall(r"&&|\|\||!|\(|\)|[A-Za-z_$][\w.]*\s*\([^()]*\)|[A-Za-z_$][\w.]*", cond)
    pos = [0]

    def atom():
        if pos[0] >= len(toks):
            return None
        t = toks[pos[0]]
        pos[0] += 1
        if t == "!":
            v = atom()
            return None if v is None else not v
        if t == "(":
            v = disj()
            if pos[0] < len(toks) and toks[pos[0]] == ")":
                pos[0] += 1
            return v
        m = re.fullmatch(r"([A-Za-z_$][\w.]*)\s*\(([^()]*)\)", t)
        if not m:
            if t == "true":
                return True
            if t == "false":
                return False
            if t.startswith("$"):
                return True
            return None
        fn, arg = m.group(1), m.group(2).strip()
        if fn == "os":
            return PLATFORM_ALIASES.get(arg) == plat
        if fn == "canImport":
            mod = arg.split(",")[0].strip().split(".")[0]
            if mod in APPLE_MODULES:
                return True
            if mod == "AppKit":
                return plat == "macOS"
            if mod in ("UIKit",):
                return plat in ("iOS", "tvOS", "visionOS")
            if mod == "WatchKit":
                return plat == "watchOS"
            if mod in NOT_APPLE_MODULES:
                return False
            return None
        if fn in ("compiler", "swift", "hasFeature", "hasAttribute"):
            return True
        if fn == "_runtime":
            return arg == "_ObjC"
        if fn == "_objc_runtime" or fn == "objc":
            return True
        return None

    def chain(operand, operator, combine):
        """Folds `operand (operator operand)*` left to right with `combine` (three-valued: True, False, None)."""
        v = operand()
        while pos[0] < len(toks) and toks[pos[0]] == operator:
            pos[0] += 1
            v = combine(v, operand())
        return v

    def conj():
        return chain(atom, "&&", lambda v, w: False if (v is False or w is False) else (True if (v and w) else None))

    def disj():
        return chain(conj, "||", lambda v, w: True if (v is True or w is True) else (False if (v is False and w is False) else None))

    return disj()


def active_platforms_by_line(text):
    """For each line (1-based index), the Apple platforms on which it may be compiled."""
    lines = text.split("\n")
    all_p = frozenset(APPLE)
    result = [all_p] * (len(lines) + 2)
    stack = []  # (parent active set, {plat: some earlier branch surely taken}, current set)
    current = all_p
    for idx, line in enumerate(lines, start=1):
        s = line.strip()
        m = re.match(r"#(if|elseif|else|endif)\b(.*)", s)
        if m:
            kw, cond = m.group(1), m.group(2)
            if kw == "if":
                taken = {}
                act = set()
                for p in current:
                    v = eval_condition(cond, p)
                    if v is not False:
                        act.add(p)
                    taken[p] = v is True
                stack.append((current, taken))
                current = frozenset(act)
            elif kw in ("elseif", "else") and stack:
                parent, taken = stack[-1]
                act = set()
                for p in parent:
                    if taken.get(p):
                        continue
                    v = True if kw == "else" else eval_condition(cond, p)
                    if v is not False:
                        act.add(p)
                    if v is True:
                        taken[p] = True
                current = frozenset(act)
            elif kw == "endif" and stack:
                current = stack.pop()[0]
            result[idx] = all_p  # directive lines themselves
            continue
        result[idx] = current
    return result


# ----------------------------------------------------------------------------- guards in sources

def block_pairs(text):
    pairs, stack = {}, []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def enclosing_block_end(pairs_sorted, pos, n):
    best = None
    for o, c in pairs_sorted:
        if o >= pos:
            break
        if c > pos:
            best = c
    return n if best is None else best


def outside_brackets(text, i, stops):
    """Each (index, character) from i on whose character is in `stops` and stands outside
    (...) and [...] (so closures inside parens are skipped)."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c in stops and depth <= 0:
            yield j, c


def next_block(text, i, pairs):
    """The `{...}` that starts at depth 0 from i (closures inside parens are skipped)."""
    for j, c in outside_brackets(text, i, "{}"):
        return (j, pairs.get(j, len(text))) if c == "{" else None
    return None


def availability_lists(text, pattern):
    """Each match of `pattern` (which ends at an open paren), the index of its close paren and the
    availability list between them, parsed; lists that do not parse are skipped."""
    for m in re.finditer(pattern, text):
        close = match_close(text, m.end() - 1)
        got = parse_availability(text[m.end():close])
        if got:
            yield m, close, got


def guard_regions(text):
    """[(start, end, {platform: version})] protected by #available / @available."""
    regions = []
    pairs = block_pairs(text)
    pairs_sorted = sorted(pairs.items())
    n = len(text)
    for m, close, got in availability_lists(text, r"#(available|unavailable)\s*\("):
        versions = dict(got[0])
        before = text[max(0, m.start() - 400):m.start()]
        kws = list(re.finditer(r"\b(if|guard|while)\b", before))
        if not kws:
            continue
        kw = kws[-1].group(1)
        blk = next_block(text, close + 1, pairs)
        if not blk:
            continue
        o, c = blk
        if m.group(1) == "available":
            if kw == "guard":
                end = enclosing_block_end(pairs_sorted, m.start(), n)
                regions.append((c, end, versions))
            else:
                regions.append((o, c, versions))
        else:  # #unavailable: the else branch (or a guard's else block) is the available code
            if kw == "guard":
                regions.append((o, c, versions))
            else:
                k = skip_ws(text, c + 1)
                if text.startswith("else", k):
                    blk2 = next_block(text, k + 4, pairs)
                    if blk2:
                        regions.append((blk2[0], blk2[1], versions))
    for m, close, got in availability_lists(text, r"@available\s*\("):
        versions = dict(got[0])
        for p in got[1]:
            versions[p] = INF
        end = declaration_end(text, close + 1, pairs)
        regions.append((m.start(), end, versions))
    return regions


CONTINUATION = re.compile(r"(\{|->|\.|=|:|,|&&|\|\||\?|where\b|throws\b|rethrows\b|async\b)")


def declaration_end(text, i, pairs):
    n = len(text)
    # skip further attributes and modifiers up to the declaration keyword
    while True:
        i = skip_ws(text, i)
        if text.startswith("@", i):
            m = re.compile(r"@[\w.]+").match(text, i)
            i = m.end() if m else i + 1
            if i < n and text[i] == "(":
                i = match_close(text, i) + 1
            continue
        m = IDENT.match(text, i)
        if not m:
            return i
        i = m.end()
        if m.group(0) in DECL_KW:
            break
        if i < n and text[i] == "(":  # private(set), nonisolated(unsafe)
            i = match_close(text, i) + 1
    for j, c in outside_brackets(text, i, "{}\n"):
        if c == "{":
            return pairs.get(j, n)
        if c == "}" or not CONTINUATION.match(text, skip_ws(text, j)):
            return j
    return n


def package_available_decls(text, floor):
    """[(name, kind, req, pos)] of the file's own types and functions annotated `@available` above
    the floor: the Linux compiler ignores Apple availability, so their unguarded uses are checked too."""
    out = []
    for m, close, got in availability_lists(text, r"@available\s*\("):
        if not got[0]:
            continue
        req = infer_vision(dict(got[0]))
        if not above_floor(req, floor):
            continue
        i = close + 1
        while True:
            i = skip_ws(text, i)
            if text.startswith("@", i):
                mm = re.compile(r"@[\w.]+").match(text, i)
                i = mm.end() if mm else i + 1
                if i < len(text) and text[i] == "(":
                    i = match_close(text, i) + 1
                continue
            mm = IDENT.match(text, i)
            if not mm:
                break
            i = mm.end()
            if mm.group(0) in DECL_KW:
                if mm.group(0) in NOMINAL_KW or mm.group(0) == "func":
                    nm = re.compile(r"\s*`?([A-Za-z_]\w*)").match(text, i)
                    if nm:
                        out.append((nm.group(1), mm.group(0), req, nm.start(1)))
                break
            if i < len(text) and text[i] == "(":
                i = match_close(text, i) + 1
    return out


# ----------------------------------------------------------------------------- typed throws

TYPED_THROWS_REQ = infer_vision(parse_availability("SwiftStdlib 6.0, *")[0])
TRIVIAL_ERROR = re.compile(r"\s*(Swift\.)?Never\s*$|\s*(any\s+)?(Swift\.)?Error\s*$")
TYPE_PREFIX_WORDS = ("sending", "inout", "borrowing", "consuming", "__owned", "__shared", "any", "some")


def skip_type_prefix_back(text, i):
    """From the char before a type, step back over `@escaping`, `@Sendable`, `sending`, ..."""
    while True:
        i = skip_ws_back(text, i)
        if i >= 0 and text[i] == ")":
            o = open_of(text, i)
            k = skip_ws_back(text, o - 1)
            mm = re.search(r"@isolated$|@convention$", text[max(0, k - 20):k + 1])
            if mm:
                i = k - len(mm.group(0))
                continue
            return i
        mm = re.search(r"(@[A-Za-z_]\w*|\b(?:" + "|".join(TYPE_PREFIX_WORDS) + r"))$", text[max(0, i - 40):i + 1])
        if mm:
            i -= len(mm.group(0))
            continue
        return i


def open_of(text, close):
    depth = 0
    pair = {")": "(", "]": "["}[text[close]]
    for j in range(close, -1, -1):
        c = text[j]
        if c == text[close]:
            depth += 1
        elif c == pair:
            depth -= 1
            if depth == 0:
                return j
    return 0


def enclosing_bracket(text, s):
    """Innermost unclosed `(`, `[` or generic `<` left of s (stopping at `{`, `}`, `;`)."""
    par = sq = ang = 0
    j = s - 1
    while j >= 0:
        c = text[j]
        if c == ")":
            par += 1
        elif c == "]":
            sq += 1
        elif c == ">" and not (j > 0 and text[j - 1] == "-"):
            ang += 1
        elif c == "(":
            if par == 0:
                return "(", j
            par -= 1
        elif c == "[":
            if sq == 0:
                return "[", j
            sq -= 1
        elif c == "<":
            if ang == 0 and j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_?"):
                return "<", j
            ang = max(0, ang - 1)
        elif c in "{};":
            return None, j
        j -= 1
    return None, -1


DECL_PARAMS_BEFORE = re.compile(r"(?:\bfunc\s+(?:`[^`]+`|[A-Za-z_]\w*|[^\s\w(<]+)|\binit[?!]?|\bsubscript"
                                r"|\bmacro\s+\w+)"
                                r"\s*(?:<[^{}]*>)?\s*$")


def classify_function_type(text, s, depth=0):
    """'stored' when the function type starting at s needs runtime metadata, else None."""
    if depth > 8:
        return None
    q = skip_type_prefix_back(text, s - 1)
    c = text[q] if q >= 0 else ""
    kind, e = enclosing_bracket(text, s)
    if kind in ("[", "<"):
        return "stored"
    if kind == "(":
        close = match_close(text, e)
        after = skip_ws(text, close + 1)
        nxt = text[after] if after < len(text) else ""
        if nxt in "?!" and text[skip_ws(text, e + 1)] != ")" and c == "(":
            return "stored"
        head = text[max(0, e - 300):e]
        if DECL_PARAMS_BEFORE.search(head):
            return None  # a parameter of a func/init/subscript
        if re.search(r"\bcase\s+`?\w+`?\s*$", head):
            return "stored"
        rest = text[after:after + 40]
        if re.match(r"(async\b|throws\b|rethrows\b|->)", rest):
            return classify_function_type(text, e, depth + 1)  # parameter of an outer function type
        pk = skip_ws_back(text, e - 1)
        if pk >= 0 and (text[pk].isalnum() or text[pk] in "_?!)]"):
            return None  # a call's argument list
        return classify_function_type(text, e, depth + 1)  # tuple element
    if c == ":":
        line_start = max(text.rfind("\n", 0, q), text.rfind("{", 0, q), text.rfind(";", 0, q)) + 1
        if re.search(r"\b(var|let)\b", text[line_start:q]):
            return "stored"
        return None
    return None


def typed_throws_sites(text):
    """[(pos, description, kind)] of typed-throws function types needing metadata; also aliases."""
    sites = []
    aliases = {}
    for m in re.finditer(r"\bthrows\s*\(", text):
        close = match_close(text, m.end() - 1)
        err = text[m.end():close]
        if TRIVIAL_ERROR.match(err):
            continue
        k = skip_ws_back(text, m.start() - 1)
        if text[max(0, k - 4):k + 1] == "async":
            k = skip_ws_back(text, k - 5)
        if k < 0 or text[k] != ")":
            continue  # `do throws(E)`, `{ x throws(E) in`
        o = open_of(text, k)
        pk = skip_ws_back(text, o - 1)
        if pk >= 0 and text[pk] in "{]":
            continue  # closure literal signature
        if DECL_PARAMS_BEFORE.search(text[max(0, o - 300):o]):
            continue  # the declaration's own typed throws
        after = text[close + 1: close + 200]
        if re.match(r"\s*(->\s*[^{}\n]*?)?\s*\bin\b", after):
            continue  # closure literal `{ (x) throws(E) -> T in`
        qb = skip_type_prefix_back(text, o - 1)
        if qb >= 0 and text[qb] == "=":
            am = re.search(r"\btypealias\s+([A-Za-z_]\w*)\s*(?:<[^>]*>)?\s*$", text[max(0, qb - 200):qb])
            if am:
                aliases[am.group(1)] = err.strip()
                continue
        if classify_function_type(text, o) == "stored":
            sites.append((o, f"typed-throws function type `throws({err.strip()})`"))
    return sites, aliases


def alias_sites(text, aliases):
    sites = []
    if not aliases:
        return sites
    for m in re.finditer(r"\b(" + "|".join(map(re.escape, aliases)) + r")\b", text):
        before = text[max(0, m.start() - 20):m.start()]
        if re.search(r"(typealias|\.)\s*$", before):
            continue
        after = skip_ws(text, m.end())
        if after < len(text) and text[after] in "?!" and not text.startswith("!=", after):
            sites.append((m.start(), f"typed-throws function type `{m.group(1)}` (throws({aliases[m.group(1)]}))"))
            continue
        if classify_function_type(text, m.start()) == "stored":
            sites.append((m.start(), f"typed-throws function type `{m.group(1)}` (throws({aliases[m.group(1)]}))"))
    return sites


# ----------------------------------------------------------------------------- scanning sources

@dataclass
class Finding:
    path: str
    line: int
    api: str
    req: dict
    failing: list

    def render(self, floor):
        where = ""
        if self.failing != above_floor(self.req, floor):
            where = f" [unguarded on {', '.join(self.failing)}]"
        return f"{self.path}:{self.line}: {self.api} needs {fmt_req(self.req)}{where} (floor {fmt_floor(floor)})"


@dataclass
class SourceFile:
    path: Path
    rel: str
    target: str
    text: str = ""


def collect_sources(root, dirs):
    files = []
    skip_dirs = {".build", ".swiftpm", "DerivedData", "build", ".git"}
    for d in dirs:
        base = root / d
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(x for x in dirnames if x not in skip_dirs and not x.startswith("."))
            for fn in sorted(filenames):
                if fn.endswith(".swift"):
                    p = Path(dirpath) / fn
                    rel = p.relative_to(root).as_posix()
                    parts = rel.split("/")
                    target = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
                    files.append(SourceFile(p, rel, target))
    return files


def call_labels(text, i):
    """Labels of the call whose `(` is at text[i]; (labels, trailing closure, end)."""
    close = match_close(text, i)
    labels = []
    for part in split_top(text[i + 1:close], ","):
        m = re.match(r"\s*`?([A-Za-z_]\w*)`?\s*:(?!:)", part)
        labels.append(m.group(1) if m else "_")
    k = skip_ws(text, close + 1)
    return labels, (k < len(text) and text[k] == "{"), close


def scan(root, dirs, index, floor):
    files = collect_sources(root, dirs)
    for f in files:
        f.text = strip_swift(f.path.read_text(encoding="utf-8", errors="replace"))
    # names the package declares
    target_types, public_types, pkg_members = {}, set(), set()
    for f in files:
        for m in re.finditer(r"\b(class|struct|enum|protocol|typealias|actor|associatedtype)\s+`?([A-Za-z_]\w*)",
                             f.text):
            target_types.setdefault(f.target, set()).add(m.group(2))
            line_start = f.text.rfind("\n", 0, m.start()) + 1
            if re.search(r"\b(public|open)\b", f.text[line_start:m.start()]):
                public_types.add(m.group(2))
        for m in re.finditer(r"\b(?:func|var|let|case)\s+`?([A-Za-z_]\w*)", f.text):
            pkg_members.add(m.group(1))
        for m in re.finditer(r"\bcase\s+[^:\n]*", f.text):  # `case a, b, c(Int)`
            for nm in re.findall(r"(?:^|,)\s*`?([A-Za-z_]\w*)", m.group(0)[4:]):
                pkg_members.add(nm)
    # the package's own declarations annotated above the floor (every declaration of the name must be)
    decl_count, annotated = {}, {}
    for f in files:
        for m in re.finditer(r"\b(?:class|struct|enum|protocol|typealias|actor|associatedtype|func)\s+`?([A-Za-z_]\w*)",
                             f.text):
            decl_count[m.group(1)] = decl_count.get(m.group(1), 0) + 1
        li = LineIndex(f.text)
        for name, kind, req, pos in package_available_decls(f.text, floor):
            annotated.setdefault(name, []).append((req, kind, f"{f.rel}:{li.line(pos)}"))
    pkg_new = {}
    for name, items in annotated.items():
        if len(items) == decl_count.get(name, 0):
            pkg_new[name] = min(items, key=lambda it: req_key(it[0]))
    findings = []
    for f in files:
        findings.extend(scan_file(f, index, floor, target_types.get(f.target, set()) | public_types, pkg_members,
                                  pkg_new))
    return files, findings


def fits_only_newer(olds, news, fits):
    """The declaration of `news` that `fits` (the one with the lowest requirement) when `fits`
    accepts none of `olds`, the declarations available at the floor; else None."""
    if any(fits(d) for d in olds):
        return None
    fitting = [d for d in news if fits(d)]
    return min(fitting, key=lambda d: req_key(d.req)) if fitting else None


def scan_file(f, index, floor, own_types, pkg_members, pkg_new=None):
    text = f.text
    n = len(text)
    li = LineIndex(text)
    active = active_platforms_by_line(text)
    regions = guard_regions(text)
    out = {}

    def report(pos, api, req):
        line = li.line(pos)
        plats = [p for p in above_floor(req, floor) if p in active[line]]
        failing = []
        for p in plats:
            guard = floor.get(p, (0,))
            for s, e, vers in regions:
                if s <= pos <= e and p in vers:
                    guard = max(guard, vers[p])
            if guard < req[p]:
                failing.append(p)
        if failing:
            out.setdefault((line, api), Finding(f.rel, line, api, req, failing))

    relevant = set(index.new_types) | set(index.inits_new) | set(index.globals_new) | set(index.members_new)
    if pkg_new:
        relevant |= set(pkg_new)
    for m in IDENT.finditer(text):
        tok = m.group(0)
        if tok not in relevant:
            continue
        s, e = m.start(), m.end()
        prev = skip_ws_back(text, s - 1)
        pc = text[prev] if prev >= 0 else ""
        if pc in "@#" or (s > 0 and text[s - 1] in "$`"):
            continue
        prev_word = ""
        if pc.isalnum() or pc == "_":
            pm = re.search(r"[A-Za-z_]\w*$", text[max(0, prev - 40):prev + 1])
            prev_word = pm.group(0) if pm else ""
        if prev_word == "import":
            continue
        member = pc == "." and not (prev > 0 and text[prev - 1] == ".")
        qualifier = ""
        if member:
            qm = re.search(r"([A-Za-z_]\w*)\s*$", text[max(0, prev - 40):prev])
            qualifier = qm.group(1) if qm else ""
        nxt_i = skip_ws(text, e)
        nxt = text[nxt_i] if nxt_i < n else ""
        # 0. the package's own `@available` types and functions
        if pkg_new and tok in pkg_new and not member and prev_word not in (
                "func", "var", "let", "case", "class", "struct", "enum", "protocol", "typealias", "actor",
                "associatedtype"):
            req, kind, where = pkg_new[tok]
            if kind != "func" or nxt in "({":
                report(s, f"{tok} (package {kind}, declared at {where})", req)
                continue
        # 1. types
        if tok in index.new_types and prev_word not in ("func", "var", "let", "case", "class", "struct", "enum",
                                                         "protocol", "typealias", "actor", "associatedtype"):
            qualified_std = member and qualifier in MODULE_PREFIXES
            if qualified_std or (tok not in own_types and (not member or qualifier in index.type_names)):
                d = index.new_types[tok]
                report(s, f"{tok} ({d.module} {d.kind})", d.req)
                continue
        # 2. initializers: Type(label: ...) / Type<...>(label: ...)
        if not member or qualifier in MODULE_PREFIXES:
            if tok in index.inits_new and tok not in own_types and nxt in "(<":
                j = nxt_i
                if nxt == "<":
                    depth = 0
                    while j < n:
                        if text[j] == "<":
                            depth += 1
                        elif text[j] == ">" and text[j - 1] != "-":
                            depth -= 1
                            if depth == 0:
                                break
                        elif text[j] in "{};\n":
                            break
                        j += 1
                    j = skip_ws(text, j + 1)
                if j < n and text[j] == "(":
                    labels, trailing, _ = call_labels(text, j)
                    if any(lb != "_" for lb in labels):
                        d = fits_only_newer(index.inits_old.get(tok, []), index.inits_new[tok],
                                            lambda d: call_fits(d.params, labels, trailing))
                        if d:
                            report(s, f"{d.signature()} ({d.module})", d.req)
                            continue
        # 3. global functions
        if not member or qualifier in MODULE_PREFIXES:
            if tok in index.globals_new and tok not in pkg_members and prev_word != "func" and nxt in "({":
                if nxt == "(":
                    labels, trailing, _ = call_labels(text, nxt_i)
                else:
                    labels, trailing = [], True
                d = fits_only_newer(index.globals_old.get(tok, []), index.globals_new[tok],
                                    lambda d: call_fits(d.params, labels, trailing))
                if d:
                    report(s, f"{d.signature()} ({d.module})", d.req)
            continue
        # 4. members
        if member and tok in index.members_new and tok not in pkg_members and tok not in index.corelibs \
                and tok != "init":
            olds = index.members_old.get(tok, [])
            news = index.members_new[tok]
            if nxt in "({":
                if nxt == "(":
                    labels, trailing, _ = call_labels(text, nxt_i)
                else:
                    labels, trailing = [], True
                d = fits_only_newer(olds, news, lambda d: call_fits(d.params, labels, trailing))
            else:
                d = fits_only_newer(olds, news, lambda d: True)
            if d:
                report(s, f"{d.signature()} ({d.module})", d.req)
    # 5. typed-throws function types
    sites, aliases = typed_throws_sites(text)
    sites += alias_sites(text, aliases)
    for pos, desc in sites:
        report(pos, desc, TYPED_THROWS_REQ)
    return [out[k] for k in sorted(out)]


# ----------------------------------------------------------------------------- floor

def read_floor(package_swift):
    text = strip_swift(Path(package_swift).read_text(encoding="utf-8"))
    raw = Path(package_swift).read_text(encoding="utf-8")
    floor = dict(SWIFTPM_DEFAULT_FLOOR)
    m = next((m for m in re.finditer(r"platforms\s*:\s*\[", text)
              if re.match(r"\s*\.(macOS|iOS|tvOS|watchOS|visionOS|macCatalyst|driverKit)\b", text[m.end():])), None)
    if not m:
        return floor
    close = match_close(text, m.end() - 1, "[", "]")
    body = raw[m.end():close]
    for pm in re.finditer(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\s*\(\s*(?:\.v(\d+(?:_\d+)*)|\"([\d.]+)\")", body):
        ver = pm.group(2).replace("_", ".") if pm.group(2) else pm.group(3)
        floor[pm.group(1)] = parse_version(ver)
    return floor


def parse_floor_arg(arg, base):
    floor = dict(base)
    for part in arg.split(","):
        if not part.strip():
            continue
        name, _, ver = part.partition("=")
        plat = PLATFORM_ALIASES.get(name.strip())
        if not plat or not ver.strip():
            raise ValueError(f"bad --floor entry {part!r} (want e.g. macOS=13,iOS=16)")
        floor[plat] = parse_version(ver)
    return floor


CORELIBS = ("Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking",
            "FoundationXML", "Dispatch")


def corelibs_names(usr):
    """Identifiers in the binary .swiftmodule of Foundation and Dispatch (no .swiftinterface exists):
    a member name found there is not unique to the new stdlib API (e.g. `Calendar.Component.second`)."""
    names = set()
    for mod in CORELIBS:
        for p in (usr / "lib" / "swift" / "linux" / f"{mod}.swiftmodule").glob("*.swiftmodule"):
            names.update(x.decode() for x in re.findall(rb"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]{2,}(?![A-Za-z0-9_])",
                                                          p.read_bytes()))
    return names


def build_index(floor, toolchain=None):
    usr, interfaces = find_interfaces(toolchain)
    decls = []
    for mod, path in interfaces.items():
        decls.extend(parse_interface(path, mod))
    index = StdlibIndex(decls, floor)
    index.corelibs = corelibs_names(usr)
    return usr, interfaces, decls, index


# ----------------------------------------------------------------------------- self-test

SELF_TEST_FILES = {
    "Sources/Positive/Uses.swift": """
        import Synchronization

        struct Buffer {
            var lanes: InlineArray<4, UInt64> = [0, 0, 0, 0]          // EXPECT InlineArray
            let lock = Mutex<Int>(0)                                  // EXPECT Mutex
            let counter = Atomic<Int>(0)                              // EXPECT Atomic
            var wide: UInt128 = 0                                     // EXPECT UInt128
            let handler: (Int) throws(BufferError) -> Void            // EXPECT typed-throws
            var maybe: ((Int) throws(BufferError) -> Int)?            // EXPECT typed-throws
            var many: [() throws(BufferError) -> Void] = []           // EXPECT typed-throws
        }
        enum BufferError: Error { case bad }

        final class Pinned: TaskExecutor {                            // EXPECT TaskExecutor
            func enqueue(_ job: consuming ExecutorJob) {}             // EXPECT ExecutorJob
        }

        func run(_ executor: Pinned) async {
            await withDiscardingTaskGroup { group in                  // EXPECT withDiscardingTaskGroup
                group.addTask {}
            }
            Task(executorPreference: executor) { }                    // EXPECT Task.init(
            let bytes: [UInt8] = [104, 105]
            _ = String(validating: bytes, as: UTF8.self)              // EXPECT String.init(validating:
            _ = "\\(Synchronization.Mutex<Int>.self)"                  // EXPECT Mutex
        }
    """,
    "Sources/Negative/Guarded.swift": """
        import Synchronization

        // InlineArray<2, Int>, Mutex(0), Atomic<Int>, UInt128, withDiscardingTaskGroup(, TaskExecutor
        /* String(validating: x, as: UTF8.self) and Task(executorPreference: e) in a comment */
        let prose = "InlineArray<2, Int> Mutex(0) Atomic<Int> UInt128 withDiscardingTaskGroup( TaskExecutor"
        let multi = \"\"\"
            let handler: (Int) throws(E) -> Void
            String(validating: x, as: UTF8.self)
            \"\"\"

        func guarded(_ executor: any TaskExecutor) async {           // EXPECT TaskExecutor
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                let lock = Mutex<Int>(0)
                let counter = Atomic<Int>(0)
                let wide: UInt128 = 0
                let handler: (Int) throws(GuardError) -> Void = { _ in }
                await withDiscardingTaskGroup { group in group.addTask {} }
                Task(executorPreference: executor) { }
                _ = String(validating: [UInt8](), as: UTF8.self)
                _ = (lock, counter, wide, handler)
            } else {
                let lock = Mutex<Int>(0)                              // EXPECT Mutex
                _ = lock
            }
        }

        func early() {
            guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
            let wide: UInt128 = 1
            _ = wide
        }

        enum GuardError: Error { case bad }

        @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
        struct Modern {
            var lanes: InlineArray<2, Int> = [0, 0]
            let lock = Mutex<Int>(0)
            let handler: (Int) throws(GuardError) -> Void
            func go(_ e: any TaskExecutor) async {
                await withDiscardingTaskGroup { _ in }
                Task(executorPreference: e) { }
            }
        }

        @available(*, unavailable)
        func never() { let a = Atomic<Int>(0); _ = a }

        @available(macOS 15, *)
        func macOnly() { let a = Atomic<Int>(0); _ = a }              // EXPECT Atomic

        #if canImport(Glibc)
        let linuxOnly = Mutex<Int>(0)
        #endif

        // a generic closure parameter that only forwards its typed throw
        func forward<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R { try body() }
        func sealed() throws(GuardError) -> Int { 1 }
        func consume(_ r: Result<Int, GuardError>) {}
        let closureLiteral = Result { () throws(GuardError) in 1 }
        """,
    "Sources/OwnLock/Lock.swift": """
        final class Mutex<Value>: @unchecked Sendable {
            private var value: Value
            init(_ value: Value) { self.value = value }
            func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R { try body(&value) }
        }
        struct Locked { let m = Mutex<Int>(0) }
        func useOwn() -> Int { Mutex(1).withLock { $0 } }

        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
        final class NewOnly {
            func run() -> NewOnly { NewOnly() }
        }
        @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
        func newHelper() -> Int { 1 }
        func callers() {
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                _ = NewOnly().run()
                _ = newHelper()
            }
            _ = NewOnly()                                             // EXPECT NewOnly
            _ = newHelper()                                           // EXPECT newHelper
        }
        """,
}


def self_test(toolchain=None):
    floor = {"macOS": (13,), "iOS": (16,), "tvOS": (16,), "watchOS": (9,), "visionOS": (1,)}
    t0 = time.time()
    _, interfaces, decls, index = build_index(floor, toolchain)
    ok = True
    print(f"self-test: {len(interfaces)} interfaces, {len(decls)} declarations; "
          "new types/globals/members/inits above the floor: %d/%d/%d/%d" % index.counts())
    for name in ("InlineArray", "Mutex", "Atomic", "UInt128", "TaskExecutor"):
        if name not in index.new_types:
            print(f"  FAIL: {name} not found as a newer-than-floor type")
            ok = False
    for name in ("withDiscardingTaskGroup",):
        if name not in index.globals_new:
            print(f"  FAIL: {name} not found as a newer-than-floor function")
            ok = False
    with tempfile.TemporaryDirectory(prefix="check_availability.") as tmp:
        root = Path(tmp)
        expected = {}
        for rel, body in SELF_TEST_FILES.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            body = textwrap.dedent(body).lstrip("\n")
            p.write_text(body)
            for no, line in enumerate(body.split("\n"), start=1):
                mm = re.search(r"// EXPECT (.+)$", line)
                if mm:
                    expected[(rel, no)] = mm.group(1).strip()
        (root / "Package.swift").write_text("platforms: [.macOS(.v13), .iOS(\"16.0\"), .tvOS(.v16), "
                                            ".watchOS(.v9), .visionOS(.v1)]\n")
        parsed = read_floor(root / "Package.swift")
        if parsed != {**SWIFTPM_DEFAULT_FLOOR, **floor}:
            print(f"  FAIL: Package.swift floor parsed as {fmt_floor(parsed)}")
            ok = False
        else:
            print(f"  ok   Package.swift floor: {fmt_floor(parsed)}")
        _, findings = scan(root, ["Sources"], index, floor)
        got = {}
        for fd in findings:
            got.setdefault((fd.path, fd.line), []).append(fd.api)
        for key, want in sorted(expected.items()):
            apis = got.get(key, [])
            if any(a.startswith(want) for a in apis):
                print(f"  ok   caught {want:<26} at {key[0]}:{key[1]}")
            else:
                print(f"  FAIL missed {want:<26} at {key[0]}:{key[1]} (found: {apis})")
                ok = False
        for key, apis in sorted(got.items()):
            for a in apis:
                want = expected.get(key)
                if want is None or not a.startswith(want):
                    if want is not None and any(x.startswith(want) for x in apis):
                        continue
                    print(f"  FAIL unexpected {key[0]}:{key[1]}: {a}")
                    ok = False
        n_neg = sum(1 for k in expected if k[0] != "Sources/Positive/Uses.swift")
        print(f"  negatives: every use in comments, strings, #available/@available/@unavailable code, "
              f"#if canImport(Glibc), the package's own Mutex and typed-throws forwarding was silent "
              f"({'yes' if ok else 'see FAIL lines'}); {len(expected)} expected findings ({n_neg} outside the guards)")
    # small unit checks
    unit = [
        (parse_availability("macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *")[0]["watchOS"], (11,)),
        (parse_availability("macOS, introduced: 10.15.4")[0]["macOS"], (10, 15, 4)),
        (parse_availability("SwiftStdlib 5.9, *")[0]["tvOS"], (17,)),
        (parse_availability("*, unavailable")[1], set(APPLE)),
        (parse_availability("*, deprecated, message: \"x\""), None),
        (eval_condition("canImport(Glibc)", "macOS"), False),
        (eval_condition("os(macOS) || os(iOS)", "iOS"), True),
        (eval_condition("!canImport(FoundationNetworking)", "tvOS"), True),
        (parse_floor_arg("macOS=10.15,visionOS=1", {})["macOS"], (10, 15)),
    ]
    bad = [i for i, (a, b) in enumerate(unit) if a != b]
    print(f"  {'ok  ' if not bad else 'FAIL'} {len(unit) - len(bad)}/{len(unit)} parser unit checks")
    ok = ok and not bad
    print(f"self-test {'passed' if ok else 'FAILED'} in {time.time() - t0:.1f}s")
    return 0 if ok else 1


# ----------------------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="package root")
    ap.add_argument("--floor", help="override, e.g. macOS=13,iOS=16,tvOS=16,watchOS=9,visionOS=1")
    ap.add_argument("--also", nargs="*", default=[], help="more folders to scan besides Sources (e.g. Examples)")
    ap.add_argument("--toolchain", help="the toolchain's usr directory (default: from `which swift`)")
    ap.add_argument("--list-apis", action="store_true", help="print the newer-than-floor API table and exit")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test(args.toolchain)
    t0 = time.time()
    root = Path(args.root)
    floor = read_floor(root / "Package.swift")
    if args.floor:
        try:
            floor = parse_floor_arg(args.floor, floor)
        except ValueError as e:
            ap.error(str(e))
    usr, interfaces, decls, index = build_index(floor, args.toolchain)
    if args.list_apis:
        for name, d in sorted(index.new_types.items()):
            print(f"type   {name} ({d.module}): {fmt_req(d.req)}")
        for table, label in ((index.globals_new, "func  "), (index.members_new, "member"), (index.inits_new, "init  ")):
            for name, ds in sorted(table.items()):
                for d in ds:
                    print(f"{label} {d.signature()} ({d.module}): {fmt_req(d.req)}")
        return 0
    files, findings = scan(root, ["Sources", *args.also], index, floor)
    for fd in findings:
        print(fd.render(floor))
    nt, ng, nm, ni = index.counts()
    print(f"check_availability: {len(findings)} finding(s) in {len(files)} Swift files "
          f"({', '.join(['Sources', *args.also])}); floor {fmt_floor(floor)}; "
          f"{len(decls)} declarations read from {len(interfaces)} interfaces under {usr} "
          f"({nt} types, {ng} functions, {nm} members, {ni} initializers above the floor); "
          f"{time.time() - t0:.1f}s", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
