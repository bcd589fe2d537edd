#!/usr/bin/env python3
"""Every library target that calls one of Apple's required-reason APIs ships a privacy manifest,
and the guide lists exactly the manifests the package ships.

App Store Connect refuses an upload whose code calls a required-reason API that no privacy manifest
declares (ITMS-91053), and a package's manifests travel with its targets into the app. From
`swift package dump-package`, for each target of a library product this script

- finds the required-reason calls in its Swift sources (comments ignored), by the APIs Apple's
  "Describing use of required reason API" lists per category:
  - file timestamp: `stat`, `fstat`, `lstat`, `fstatat`, `getattrlist…`, `attributesOfItem`,
    `.modificationDate`, `.creationDate`, `fileModificationDate`, `contentModificationDateKey`,
    `creationDateKey`;
  - system boot time: `systemUptime`, `mach_absolute_time`;
  - disk space: `statfs`, `statvfs`, `fstatfs`, `fstatvfs`, `getattrlist…`, the
    `volumeAvailableCapacity…` and `volumeTotalCapacity` keys, `systemFreeSize`, `systemSize`
    (and `attributesOfFileSystem`, the call that returns those two);
  - user defaults: `UserDefaults`;
  Not on Apple's list, so not counted: `DispatchTime` (`.now()`, `uptimeNanoseconds`),
  `ContinuousClock`, `SuspendingClock`, `clock_gettime`: they read a monotonic clock inside the
  system's own libraries (libdispatch, the Swift runtime), not through an API Apple names;
- requires `PrivacyInfo.xcprivacy` in the target's folder, declared as a resource in Package.swift;
- parses it as a property list (plistlib) and requires `NSPrivacyTracking` false, no tracking
  domains, no collected data, and for every category called an entry whose reasons are among
  those that fit this package (C617.1: files in the app's container; 3B52.1: files the user
  picked; 35F9.1 elapsed time; E174.1 enough space to write; 85F4.1 space shown to the user;
  CA92.1 the app's own defaults);
- refuses a manifest in a target that calls none (it would declare what the code does not do);
- reads the table of manifests in the guide "Shipping an App on Apple Platforms" (between
  `<!-- privacy-manifests -->` and `<!-- /privacy-manifests -->`: one row per target, its
  category and its reasons) and fails when it names other targets than those that ship a
  manifest (a file on disk or a resource in Package.swift), or other categories or reasons than
  a target's manifest declares.

`swift package dump-package` costs half a second; its output is kept in
`.build/check-cache/` under a digest of Package.swift and of the toolchain's `swift` (path and
modification time), so a second run (the check after its self-test) reads it back.

Usage: check_privacy_manifests.py [--self-test] [--package-json FILE]
"""
import copy
import functools
import hashlib
import json
import os
import plistlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "PrivacyInfo.xcprivacy"
GUIDE = ROOT / "Sources/StationClient/StationClient.docc/Guide/ShippingAnAppOnApplePlatforms.md"
GUIDE_START, GUIDE_END = "<!-- privacy-manifests -->", "<!-- /privacy-manifests -->"

# `getattrlist…` is in two of Apple's lists (a file's dates, a volume's space): a call counts for both.
CATEGORIES = {
    "NSPrivacyAccessedAPICategoryFileTimestamp": re.compile(
        r"(?<![\w.])(?:f?stat|lstat|fstatat|getattrlist\w*|fgetattrlist)\s*\((?!\))|attributesOfItem\s*\(|\.(?:modificationDate|creationDate)\b"
        r"|fileModificationDate|contentModificationDateKey|creationDateKey"),
    "NSPrivacyAccessedAPICategorySystemBootTime": re.compile(r"\bsystemUptime\b|\bmach_absolute_time\b"),
    "NSPrivacyAccessedAPICategoryDiskSpace": re.compile(
        r"(?<![\w.])f?statv?fs\s*\(|(?<![\w.])(?:getattrlist\w*|fgetattrlist)\s*\((?!\))"
        r"|\bvolumeAvailableCapacity\w*|\bvolumeTotalCapacity\w*|\bsystemFreeSize\b|\bsystemSize\b"
        r"|\bNSFileSystem(?:Free)?Size\b|\battributesOfFileSystem\b"),
    "NSPrivacyAccessedAPICategoryUserDefaults": re.compile(r"\bUserDefaults\b"),
}
# What a file must hold for a category's pattern to match in it, tested first because it costs a
# set lookup or a substring search where the pattern costs a scan: whole words (the names the
# pattern wants after a non-word character and before `(` or a word boundary) and substrings (the
# names it takes anywhere). Every match of a pattern contains one of its category's.
TRIGGERS = {
    "NSPrivacyAccessedAPICategoryFileTimestamp": (
        {"stat", "fstat", "lstat", "fstatat", "modificationDate", "creationDate"},
        ("getattrlist", "attributesOfItem", "fileModificationDate", "contentModificationDateKey", "creationDateKey")),
    "NSPrivacyAccessedAPICategorySystemBootTime": (set(), ("systemUptime", "mach_absolute_time")),
    "NSPrivacyAccessedAPICategoryDiskSpace": (
        {"statfs", "statvfs", "fstatfs", "fstatvfs"},
        ("getattrlist", "volumeAvailableCapacity", "volumeTotalCapacity", "systemFreeSize", "systemSize", "NSFileSystem",
         "attributesOfFileSystem")),
    "NSPrivacyAccessedAPICategoryUserDefaults": (set(), ("UserDefaults",)),
}
WORD = re.compile(r"\w+")
# The reasons this package may give (Apple's descriptions, abridged): C617.1 files in the app's
# container, 3B52.1 files the user granted access to; 35F9.1 elapsed time between events in the app;
# E174.1 checking there is enough space to write files (or freeing space when low); 85F4.1 disk space
# shown to the user; CA92.1 the app's own defaults.
REASONS = {
    "NSPrivacyAccessedAPICategoryFileTimestamp": {"C617.1", "3B52.1"},
    "NSPrivacyAccessedAPICategorySystemBootTime": {"35F9.1"},
    "NSPrivacyAccessedAPICategoryDiskSpace": {"E174.1", "85F4.1"},
    "NSPrivacyAccessedAPICategoryUserDefaults": {"CA92.1"},
}
# The names the guide's table gives the categories.
GUIDE_CATEGORY_NAMES = {
    "file timestamp": "NSPrivacyAccessedAPICategoryFileTimestamp",
    "system boot time": "NSPrivacyAccessedAPICategorySystemBootTime",
    "disk space": "NSPrivacyAccessedAPICategoryDiskSpace",
    "user defaults": "NSPrivacyAccessedAPICategoryUserDefaults",
}

# Swift's string literals and comments, in the order a reader meets them: a raw string (`#"…"#`,
# `#"""…"""#`), a multi-line string, a string, a line comment, a block comment. Matching them in
# one pass from the left keeps `//` inside a string and `"` inside a comment what they are.
TOKENS = re.compile(
    r'(?P<hashes>#+)(?:""".*?"""|"[^\n]*?")(?P=hashes)'
    r'|"""(?:[^\\]|\\.)*?"""'
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)",
    re.S)


def strip_comments(text):
    """The text with `//` and `/* */` comments blanked (line breaks and string contents stay)."""
    def blank(match):
        if match.group("comment") is None:
            return match.group(0)
        return re.sub(r"[^\n]", " ", match.group(0))
    return TOKENS.sub(blank, text)


def library_targets(package):
    names = set()
    for product in package["products"]:
        if "library" in product["type"]:
            names.update(product["targets"])
    return [t for t in package["targets"] if t["name"] in names and t["type"] == "regular"]


def target_folder(target, root):
    return root / (target.get("path") or f"Sources/{target['name']}")


def calls_in(text, where="<text>"):
    """category -> ['where:line', …] of the required-reason calls in Swift source `text`."""
    stripped = strip_comments(text)
    words = None
    found = {}
    for category, pattern in CATEGORIES.items():
        whole, parts = TRIGGERS[category]
        if not any(part in stripped for part in parts):
            if not whole:
                continue
            words = words if words is not None else set(WORD.findall(stripped))
            if words.isdisjoint(whole):
                continue
        for match in pattern.finditer(stripped):
            found.setdefault(category, []).append(f"{where}:{stripped.count(chr(10), 0, match.start()) + 1}")
    return found


@functools.lru_cache(maxsize=None)
def calls(folder):
    """category -> ['file:line', …] of the required-reason calls under `folder` (read once per
    run: the self-test checks the same folders many times)."""
    found = {}
    for path in sorted(folder.rglob("*.swift")):
        where = str(path.relative_to(folder.parent.parent))
        for category, sites in calls_in(path.read_text(encoding="utf-8"), where).items():
            found.setdefault(category, []).extend(sites)
    return found


def declared_types(plist):
    """category -> reasons of a parsed manifest's `NSPrivacyAccessedAPITypes`."""
    declared = {}
    for entry in plist.get("NSPrivacyAccessedAPITypes") or []:
        if isinstance(entry, dict):
            declared[entry.get("NSPrivacyAccessedAPIType")] = entry.get("NSPrivacyAccessedAPITypeReasons") or []
    return declared


def manifest_problems(data, called, where):
    problems = []
    try:
        plist = plistlib.loads(data)
    except Exception as error:  # plistlib raises several kinds for malformed input
        return [f"{where}: not a property list: {error}"]
    if not isinstance(plist, dict):
        return [f"{where}: the top level is not a dictionary"]
    if plist.get("NSPrivacyTracking") is not False:
        problems.append(f"{where}: NSPrivacyTracking must be false")
    if plist.get("NSPrivacyTrackingDomains", []) != []:
        problems.append(f"{where}: NSPrivacyTrackingDomains must be empty")
    if plist.get("NSPrivacyCollectedDataTypes") != []:
        problems.append(f"{where}: NSPrivacyCollectedDataTypes must be present and empty (the SDK collects nothing)")
    declared = declared_types(plist)
    for category, sites in called.items():
        reasons = declared.get(category)
        if not reasons:
            problems.append(f"{where}: {category} is called ({', '.join(sites[:3])}) but not declared with a reason")
        elif not set(reasons) <= REASONS[category]:
            problems.append(f"{where}: {category}: reasons {sorted(set(reasons) - REASONS[category])} do not fit this package")
    for category in declared:
        if category not in called:
            problems.append(f"{where}: declares {category}, which the target does not call")
    return problems


def shipped_manifests(package, root, removed=frozenset(), replaced=None):
    """target -> {category: reasons} for every library target that ships a manifest (the file, or
    a resource naming it); a manifest that does not parse declares nothing here (the other
    checks report it)."""
    shipped = {}
    for target in library_targets(package):
        if target["name"] in removed:
            continue
        manifest = target_folder(target, root) / MANIFEST
        declared = any(r.get("path") == MANIFEST for r in target.get("resources") or [])
        if not manifest.exists() and not declared:
            continue
        data = (replaced or {}).get(target["name"])
        try:
            plist = plistlib.loads(data if data is not None else manifest.read_bytes())
        except Exception:  # malformed or missing: reported by problems()
            plist = {}
        shipped[target["name"]] = {c: sorted(r) for c, r in declared_types(plist if isinstance(plist, dict) else {}).items()}
    return shipped


def guide_table(text):
    """target -> {category: reasons} from the guide's table, or a list of problems when it cannot
    be read."""
    start, end = text.find(GUIDE_START), text.find(GUIDE_END)
    if start < 0 or end < start:
        return [f"the guide has no table of privacy manifests between {GUIDE_START} and {GUIDE_END}"]
    table, problems = {}, []
    for line in text[start + len(GUIDE_START):end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.strip().startswith("|") else []
        target = re.fullmatch(r"`(\w+)`", cells[0]) if cells else None
        if not target:
            continue  # the header, its rule, prose around the table
        if len(cells) < 3:
            problems.append(f"the guide's row for {target.group(1)} needs a category and its reasons")
            continue
        category = GUIDE_CATEGORY_NAMES.get(cells[1].lower())
        if category is None:
            problems.append(f"the guide's row for {target.group(1)} names an unknown category {cells[1]!r}")
            continue
        reasons = sorted(re.findall(r"[0-9A-F]{4}\.\d", cells[2]))
        table.setdefault(target.group(1), {})[category] = reasons
    return problems or table


def guide_problems(package, root, guide_text, removed=frozenset(), replaced=None):
    """Where the guide's table and the manifests the package ships differ."""
    table = guide_table(guide_text)
    if isinstance(table, list):
        return table
    shipped = shipped_manifests(package, root, removed, replaced)
    found = []
    for name in sorted(set(shipped) - set(table)):
        found.append(f"the guide's table of privacy manifests leaves out {name}, which ships one")
    for name in sorted(set(table) - set(shipped)):
        found.append(f"the guide's table of privacy manifests lists {name}, which ships none")
    for name in sorted(set(table) & set(shipped)):
        if table[name] != shipped[name]:
            found.append(f"the guide's table says {name}'s manifest declares {table[name]}; it declares {shipped[name]}")
    return found


def problems(package, root, removed=frozenset(), replaced=None, guide_text=None):
    """Every finding; `removed` names targets whose manifest is taken as missing, `replaced` maps
    a target to manifest bytes to check instead, and `guide_text` replaces the guide (all three
    for the self-test)."""
    found = []
    for target in library_targets(package):
        folder = target_folder(target, root)
        called = calls(folder)
        manifest = folder / MANIFEST
        exists = manifest.exists() and target["name"] not in removed
        declared = any(r.get("path") == MANIFEST for r in target.get("resources") or []) and target["name"] not in removed
        if not called:
            if exists:
                found.append(f"{target['name']}: ships {MANIFEST} but calls no required-reason API")
            continue
        if not exists:
            sites = "; ".join(f"{c.split('Category')[-1]} at {', '.join(s[:2])}" for c, s in called.items())
            found.append(f"{target['name']}: calls required-reason APIs ({sites}) and ships no {MANIFEST}")
            continue
        if not declared:
            found.append(f"{target['name']}: {MANIFEST} is not declared in its resources in Package.swift")
        data = (replaced or {}).get(target["name"]) or manifest.read_bytes()
        found += manifest_problems(data, called, f"{target['name']}/{MANIFEST}")
    text = guide_text if guide_text is not None else GUIDE.read_text(encoding="utf-8")
    found += [f"{GUIDE.relative_to(root) if GUIDE.is_relative_to(root) else GUIDE}: {p}"
              for p in guide_problems(package, root, text, removed, replaced)]
    return found


def self_test(package):
    assert problems(package, ROOT) == [], problems(package, ROOT)
    with_manifest = [t["name"] for t in library_targets(package) if (target_folder(t, ROOT) / MANIFEST).exists()]
    assert with_manifest, "no target ships a privacy manifest"
    for name in with_manifest:
        assert any(name in p and "ships no" in p for p in problems(package, ROOT, removed={name})), f"{name}'s removal not caught"
    victim = with_manifest[0]
    good = (target_folder(next(t for t in package["targets"] if t["name"] == victim), ROOT) / MANIFEST).read_bytes()
    plist = plistlib.loads(good)
    cases = {
        "malformed": good[: len(good) // 2],
        "tracking": plistlib.dumps({**plist, "NSPrivacyTracking": True}),
        "collected data": plistlib.dumps({**plist, "NSPrivacyCollectedDataTypes": [{"NSPrivacyCollectedDataType": "x"}]}),
        "no API entry": plistlib.dumps({**plist, "NSPrivacyAccessedAPITypes": []}),
        "a reason that does not fit": plistlib.dumps({**plist, "NSPrivacyAccessedAPITypes": [
            {"NSPrivacyAccessedAPIType": "NSPrivacyAccessedAPICategoryFileTimestamp", "NSPrivacyAccessedAPITypeReasons": ["DDA9.1"]}]}),
    }
    for what, data in cases.items():
        assert any(victim in p for p in problems(package, ROOT, replaced={victim: data})), f"not caught: {what}"
    undeclared = copy.deepcopy(package)
    next(t for t in undeclared["targets"] if t["name"] == victim)["resources"] = []
    assert any("not declared" in p for p in problems(undeclared, ROOT)), "an undeclared resource is not caught"

    # The guide's table against the manifests: a row left out, a row too many, other reasons, no table.
    guide = GUIDE.read_text(encoding="utf-8")
    row = next(line for line in guide.splitlines() if line.startswith(f"| `{victim}` |"))
    planted = {
        "a target left out of the guide": (guide.replace(row + "\n", ""), f"leaves out {victim}"),
        "a target the guide lists that ships none": (
            guide.replace(GUIDE_END, "| `Manifest` | File timestamp | C617.1 |\n" + GUIDE_END), "lists Manifest"),
        "other reasons in the guide": (guide.replace(row, row.replace("C617.1", "DDA9.1")), f"{victim}'s manifest declares"),
        "no table": (guide.replace(GUIDE_START, ""), "no table"),
    }
    for what, (text, expected) in planted.items():
        assert any(expected in p for p in problems(package, ROOT, guide_text=text)), f"not caught: {what}"
    # …and a manifest removed from the package while the guide still lists it.
    assert any(f"lists {victim}" in p for p in problems(package, ROOT, removed={victim})), "a stale guide row is not caught"

    # What counts as a call, per category, and what does not.
    def counted(source):
        return sorted(c.replace("NSPrivacyAccessedAPICategory", "") for c in calls_in(source))
    samples = {
        "let a = x.modificationDate // fstat(\n/* stat( */ let b = 1\nvar s = stat()\nfstat(fd, &s)\n": ["FileTimestamp"],
        'let url = "https://example.com/" /* statvfs( */; let s = statfs(path, &buffer) // fstat(\n': ["DiskSpace"],
        "let free = try FileManager.default.attributesOfFileSystem(forPath: path)\n": ["DiskSpace"],
        "let n = attributes[.systemFreeSize]\n": ["DiskSpace"],
        "let k: URLResourceKey = .volumeAvailableCapacityForImportantUsageKey\n": ["DiskSpace"],
        "var s = statfs(); fstatvfs(fd, &s)\n": ["DiskSpace"],
        "getattrlist(path, &list, &buffer, size, 0)\n": ["DiskSpace", "FileTimestamp"],
        "let up = ProcessInfo.processInfo.systemUptime\n": ["SystemBootTime"],
        "let t = mach_absolute_time()\n": ["SystemBootTime"],
        "let d = DispatchTime.now().uptimeNanoseconds; let c = ContinuousClock.now\n": [],
        "let defaults = UserDefaults.standard\n": ["UserDefaults"],
    }
    for source, expected in samples.items():
        assert counted(source) == expected, (source, counted(source), expected)
    # Every API of Apple's lists is counted, as a call in its own file (so the triggers let it through).
    listed = {
        "FileTimestamp": ["stat(path, &s)", "fstat(fd, &s)", "lstat(path, &s)", "fstatat(fd, name, &s, 0)",
                          "fm.attributesOfItem(atPath: path)", "values.modificationDate", "values.creationDate",
                          "attributes.fileModificationDate()", "[URLResourceKey.contentModificationDateKey]",
                          "[URLResourceKey.creationDateKey]"],
        "SystemBootTime": ["ProcessInfo.processInfo.systemUptime", "mach_absolute_time()"],
        "DiskSpace": ["statfs(path, &s)", "statvfs(path, &s)", "fstatfs(fd, &s)", "fstatvfs(fd, &s)",
                      "[URLResourceKey.volumeAvailableCapacityKey]", "[.volumeAvailableCapacityForOpportunisticUsageKey]",
                      "[.volumeTotalCapacityKey]", "attributes[.systemSize]", "attributes[FileAttributeKey.systemFreeSize]",
                      "fm.attributesOfFileSystem(forPath: path)"],
        "UserDefaults": ["UserDefaults(suiteName: name)"],
    }
    for category, calls_listed in listed.items():
        for call in calls_listed:
            assert category in counted(f"let x = {call}\n"), (call, counted(f"let x = {call}\n"))
    for call in ["getattrlist(path, &list, &buffer, size, 0)", "fgetattrlist(fd, &list, &buffer, size, 0)",
                 "getattrlistat(fd, path, &list, &buffer, size, 0)", "getattrlistbulk(fd, &list, &buffer, size, 0)"]:
        assert {"FileTimestamp", "DiskSpace"} <= set(counted(f"let x = {call}\n")), call
    print(f"check_privacy_manifests: self-test passed ({len(with_manifest)} manifests removed one by one, "
          f"{len(cases) + 1} broken manifests, {len(planted) + 1} guide tables that do not match, {len(samples)} samples)")


def dump_package():
    """`swift package dump-package`, kept under a digest of Package.swift and the toolchain."""
    swift = shutil.which("swift")
    key = hashlib.sha256((ROOT / "Package.swift").read_bytes())
    if swift:
        key.update(f"{os.path.realpath(swift)}:{os.stat(os.path.realpath(swift)).st_mtime_ns}".encode())
    cached = ROOT / ".build" / "check-cache" / f"dump-package-{key.hexdigest()[:32]}.json"
    try:
        return json.loads(cached.read_text())
    except (OSError, ValueError):
        pass
    output = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    package = json.loads(output)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        temporary = cached.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(output)
        os.replace(temporary, cached)
    except OSError:
        pass  # the cache only saves time
    return package


def main():
    if "--package-json" in sys.argv:
        package = json.loads(Path(sys.argv[sys.argv.index("--package-json") + 1]).read_text())
    else:
        package = dump_package()
    if "--self-test" in sys.argv:
        self_test(package)
        return 0
    return report(problems(package, ROOT), "check_privacy_manifests: failed",
                  "check_privacy_manifests: every library target calling a required-reason API ships a privacy manifest "
                  "that declares it, and the guide lists them")


if __name__ == "__main__":
    sys.exit(main())
