#!/usr/bin/env python3
"""Checks from `swift package dump-package` that the whole package builds for iOS, tvOS, watchOS
and visionOS, and that Apple platforms link no system library but the OS's own. For every target
(library, executable, test and support targets alike):

- an edge to `CSodium` or `CLibCrypto` (libsodium, libcrypto: in no Apple SDK, macOS's included)
  carries a condition naming only Linux/Android and the `SystemLibraries` trait;
- an edge to `CCurl` or `CurlTransport` (libcurl: its header is in the macOS SDK, in none of iOS,
  tvOS, watchOS, visionOS) carries a platform condition that names none of iOS, tvOS, watchOS,
  visionOS (nor Mac Catalyst or DriverKit);
- no library product reaches `CCurl` or `CurlTransport` but under a Linux/Android condition
  (`CurlTransport` itself excepted): on macOS an app links only the OS's libraries.

Usage: check_apple_dependencies.py [--self-test] [--package-json FILE]
"""
import copy
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_LIBRARIES = {"CSodium", "CLibCrypto"}
CURL = {"CCurl", "CurlTransport"}
LINUX_ONLY = {"linux", "android"}
# Platforms whose SDK has no <curl/curl.h> (SwiftPM's platform names, lowercased).
WITHOUT_CURL = {"ios", "tvos", "watchos", "visionos", "maccatalyst", "driverkit"}


def dependencies(target):
    """(name, condition) for each of a target's dependencies."""
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                name, condition = dependency[kind][0], dependency[kind][-1]
                yield name, condition if isinstance(condition, dict) else None


def platforms_of(condition):
    return {name.lower() for name in (condition or {}).get("platformNames") or []}


def problems(package):
    targets = {target["name"]: target for target in package["targets"]}
    found = []
    # 1. Every edge of every target.
    for name, target in targets.items():
        for dependency, condition in dependencies(target):
            platforms = platforms_of(condition)
            if dependency in SYSTEM_LIBRARIES:
                traits = set((condition or {}).get("traits") or [])
                if not platforms or not platforms <= LINUX_ONLY or "SystemLibraries" not in traits:
                    found.append(f"{name} ({target.get('type', 'target')}) depends on {dependency} without a "
                                 "Linux/Android + SystemLibraries condition")
            elif dependency in CURL:
                if not platforms:
                    found.append(f"{name} ({target.get('type', 'target')}) depends on {dependency} on every platform "
                                 "(iOS, tvOS, watchOS and visionOS have no libcurl): add .whereCurlIs")
                elif platforms & WITHOUT_CURL:
                    found.append(f"{name} ({target.get('type', 'target')}) depends on {dependency} on "
                                 f"{', '.join(sorted(platforms & WITHOUT_CURL))}, which have no libcurl")
    # 2. What a library product reaches on macOS: libcurl only under a Linux condition.
    library_targets = set()
    for product in package["products"]:
        if "library" in product["type"]:
            library_targets.update(product["targets"])
    reached, stack = {}, [(name, name) for name in library_targets]
    while stack:
        name, path = stack.pop()
        if name in reached or name not in targets:
            continue
        reached[name] = path
        for dependency, condition in dependencies(targets[name]):
            platforms = platforms_of(condition)
            linux_only = bool(platforms) and platforms <= LINUX_ONLY
            if dependency in CURL and name != "CurlTransport" and not linux_only:
                found.append(f"{name} (reached from a library product by {path}) depends on {dependency} on macOS")
                continue
            if not linux_only:
                stack.append((dependency, f"{path} -> {dependency}"))
    return found


def dump_package():
    return json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                     capture_output=True, text=True).stdout)


def self_test(package):
    curl = {"platformNames": ["linux", "android", "macos"]}
    good = {"products": [{"type": {"library": ["automatic"]}, "targets": ["A"]}],
            "targets": [{"name": "A", "type": "regular", "dependencies": [
                {"byName": ["B", None]},
                {"target": ["CSodium", {"platformNames": ["linux", "android"], "traits": ["SystemLibraries"]}]},
                {"target": ["CurlTransport", {"platformNames": ["linux"], "traits": ["SystemLibraries"]}]}]},
                {"name": "B", "type": "regular", "dependencies": []},
                {"name": "CurlTransport", "type": "regular", "dependencies": [{"target": ["CCurl", curl]}]},
                {"name": "Tool", "type": "executable", "dependencies": [{"target": ["CurlTransport", curl]}]},
                {"name": "ATests", "type": "test", "dependencies": [{"target": ["CurlTransport", curl]}]}]}
    assert problems(good) == [], problems(good)
    cases = {
        "a library target's unconditioned system libraries": ("B", [{"byName": ["CLibCrypto", None]}, {"byName": ["CCurl", None]}]),
        "a test target's unconditioned CurlTransport": ("ATests", [{"byName": ["CurlTransport", None]}]),
        "an executable's CCurl on iOS": ("Tool", [{"target": ["CCurl", {"platformNames": ["linux", "ios"]}]}]),
        "a test target's CSodium on macOS": ("ATests", [{"target": ["CSodium", {"platformNames": ["linux", "macos"], "traits": ["SystemLibraries"]}]}]),
        "a library's CurlTransport on macOS": ("B", [{"target": ["CurlTransport", curl]}]),
    }
    for what, (name, planted) in cases.items():
        bad = copy.deepcopy(good)
        next(t for t in bad["targets"] if t["name"] == name)["dependencies"] = planted
        assert problems(bad), f"not caught: {what}"
    # The package itself, with one unconditioned edge planted in each kind of target that has a
    # conditioned one (a test target, an executable, a support target).
    assert problems(package) == [], problems(package)
    planted = 0
    for target in package["targets"]:
        for dependency in target.get("dependencies", []):
            for kind in ("byName", "target", "product"):
                if kind in dependency and dependency[kind][0] in CURL | SYSTEM_LIBRARIES:
                    bad = copy.deepcopy(package)
                    victim = next(t for t in bad["targets"] if t["name"] == target["name"])
                    victim["dependencies"].append({"byName": [dependency[kind][0], None]})
                    assert any(target["name"] in p for p in problems(bad)), \
                        f"an unconditioned {dependency[kind][0]} planted in {target['name']} is not caught"
                    planted += 1
    assert planted >= 8, f"only {planted} edges to system libraries found in the package"
    print(f"check_apple_dependencies: self-test passed ({len(cases)} planted cases, {planted} edges of the package unconditioned one by one)")


def main():
    if "--package-json" in sys.argv:
        package = json.loads(Path(sys.argv[sys.argv.index("--package-json") + 1]).read_text())
    else:
        package = dump_package()
    if "--self-test" in sys.argv:
        self_test(package)
        return
    found = problems(package)
    for problem in found:
        print(problem)
    if found:
        sys.exit(1)
    print("check_apple_dependencies: every edge to libcurl, libsodium and libcrypto leaves iOS, tvOS, watchOS "
          "and visionOS out; library products need no system library on Apple platforms")


main()
