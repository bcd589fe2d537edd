#!/usr/bin/env python3
"""Every library target that calls one of Apple's required-reason APIs ships a privacy manifest.

App Store Connect refuses an upload whose code calls a required-reason API that no privacy manifest
declares (ITMS-91053), and a package's manifests travel with its targets into the app. From
`swift package dump-package`, for each target of a library product this script

- finds the required-reason calls in its Swift sources (comments ignored): the file-timestamp
  category (`stat`, `fstat`, `lstat`, `fstatat`, `getattrlist…`, `attributesOfItem`,
  `.modificationDate`, `.creationDate`, `fileModificationDate`, `contentModificationDateKey`,
  `creationDateKey`), system boot time (`systemUptime`, `mach_absolute_time`), disk space
  (`statfs`, `statvfs`, `volumeAvailableCapacity…`), user defaults (`UserDefaults`);
- requires `PrivacyInfo.xcprivacy` in the target's folder, declared as a resource in Package.swift;
- parses it as a property list (plistlib) and requires `NSPrivacyTracking` false, no tracking
  domains, no collected data, and for every category called an entry whose reasons are among
  those that fit this package (C617.1: files in the app's container; 3B52.1: files the user
  picked; 35F9.1, 85F4.1, CA92.1 for the other categories);
- refuses a manifest in a target that calls none (it would declare what the code does not do).

Usage: check_privacy_manifests.py [--self-test] [--package-json FILE]
"""
import copy
import json
import plistlib
import re
import subprocess
import sys
from pathlib import Path

from _common import report

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = "PrivacyInfo.xcprivacy"

CATEGORIES = {
    "NSPrivacyAccessedAPICategoryFileTimestamp": re.compile(
        r"(?<![\w.])(?:f?stat|lstat|fstatat|getattrlist\w*|fgetattrlist)\s*\((?!\))|attributesOfItem\s*\(|\.(?:modificationDate|creationDate)\b"
        r"|fileModificationDate|contentModificationDateKey|creationDateKey"),
    "NSPrivacyAccessedAPICategorySystemBootTime": re.compile(r"\bsystemUptime\b|\bmach_absolute_time\s*\("),
    "NSPrivacyAccessedAPICategoryDiskSpace": re.compile(r"(?<![\w.])statv?fs\s*\(|volumeAvailableCapacity|volumeTotalCapacity"),
    "NSPrivacyAccessedAPICategoryUserDefaults": re.compile(r"\bUserDefaults\b"),
}
# The reasons this package may give (Apple's descriptions, abridged): C617.1 files in the app's
# container, 3B52.1 files the user granted access to; 35F9.1 elapsed time between events; 85F4.1
# disk space shown to the user; CA92.1 the app's own defaults.
REASONS = {
    "NSPrivacyAccessedAPICategoryFileTimestamp": {"C617.1", "3B52.1"},
    "NSPrivacyAccessedAPICategorySystemBootTime": {"35F9.1"},
    "NSPrivacyAccessedAPICategoryDiskSpace": {"85F4.1"},
    "NSPrivacyAccessedAPICategoryUserDefaults": {"CA92.1"},
}


def strip_comments(text):
    """The text with `//` and `/* */` comments blanked (string contents stay)."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return "\n".join(re.sub(r'^((?:[^"/]|"(?:[^"\\]|\\.)*"|/(?!/))*)//.*$', r"\1", line) for line in text.splitlines())


def library_targets(package):
    names = set()
    for product in package["products"]:
        if "library" in product["type"]:
            names.update(product["targets"])
    return [t for t in package["targets"] if t["name"] in names and t["type"] == "regular"]


def target_folder(target, root):
    return root / (target.get("path") or f"Sources/{target['name']}")


def calls(folder):
    """category -> ['file:line', …] of the required-reason calls under `folder`."""
    found = {}
    for path in sorted(folder.rglob("*.swift")):
        for number, line in enumerate(strip_comments(path.read_text(encoding="utf-8")).splitlines(), 1):
            for category, pattern in CATEGORIES.items():
                if pattern.search(line):
                    found.setdefault(category, []).append(f"{path.relative_to(folder.parent.parent)}:{number}")
    return found


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
    declared = {}
    for entry in plist.get("NSPrivacyAccessedAPITypes") or []:
        if isinstance(entry, dict):
            declared[entry.get("NSPrivacyAccessedAPIType")] = entry.get("NSPrivacyAccessedAPITypeReasons") or []
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


def problems(package, root, removed=frozenset(), replaced=None):
    """Every finding; `removed` names targets whose manifest is taken as missing and `replaced`
    maps a target to manifest bytes to check instead (both for the self-test)."""
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
    sample = "let a = x.modificationDate // fstat(\n/* stat( */ let b = 1\nvar s = stat()\nfstat(fd, &s)\n"
    assert len(calls_in(sample)) == 2, calls_in(sample)
    print(f"check_privacy_manifests: self-test passed ({len(with_manifest)} manifests removed one by one, "
          f"{len(cases) + 1} broken manifests)")


def calls_in(text):
    return [line for line in strip_comments(text).splitlines()
            if CATEGORIES["NSPrivacyAccessedAPICategoryFileTimestamp"].search(line)]


def main():
    if "--package-json" in sys.argv:
        package = json.loads(Path(sys.argv[sys.argv.index("--package-json") + 1]).read_text())
    else:
        package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                            capture_output=True, text=True).stdout)
    if "--self-test" in sys.argv:
        self_test(package)
        return 0
    return report(problems(package, ROOT), "check_privacy_manifests: failed",
                  "check_privacy_manifests: every library target calling a required-reason API ships a privacy manifest that declares it")


if __name__ == "__main__":
    sys.exit(main())
