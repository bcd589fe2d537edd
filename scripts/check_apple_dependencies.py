#!/usr/bin/env python3
"""Checks from `swift package dump-package` that Apple platforms link no system library but the
OS's own:

- `CSodium` and `CLibCrypto` are dependencies only under a Linux/Android platform condition and the
  `SystemLibraries` trait;
- no library product's target depends on `CCurl` or `CurlTransport` except `CurlTransport` itself,
  or under a Linux condition.

Usage: check_apple_dependencies.py [--self-test]
"""
import json
import subprocess
import sys

SYSTEM_LIBRARIES = {"CSodium", "CLibCrypto"}
CURL = {"CCurl", "CurlTransport"}
LINUX_ONLY = {"linux", "android"}


def dependencies(target):
    """(name, condition) for each of a target's dependencies."""
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                name, condition = dependency[kind][0], dependency[kind][-1]
                yield name, condition if isinstance(condition, dict) else None


def problems(package):
    targets = {target["name"]: target for target in package["targets"]}
    library_targets = set()
    for product in package["products"]:
        if "library" in product["type"]:
            library_targets.update(product["targets"])
    # Every target a library product reaches, with the path that reaches it.
    reached, stack = {}, [(name, name) for name in library_targets]
    found = []
    while stack:
        name, path = stack.pop()
        if name in reached or name not in targets:
            continue
        reached[name] = path
        for dependency, condition in dependencies(targets[name]):
            platforms = set((condition or {}).get("platformNames") or [])
            linux_only = bool(platforms) and platforms <= LINUX_ONLY
            if dependency in SYSTEM_LIBRARIES:
                traits = set((condition or {}).get("traits") or [])
                if not linux_only or "SystemLibraries" not in traits:
                    found.append(f"{name} depends on {dependency} without a Linux/Android + SystemLibraries condition")
                continue
            if dependency in CURL and name != "CurlTransport" and not linux_only:
                found.append(f"{name} (reached from a library product by {path}) depends on {dependency} on every platform")
                continue
            if not linux_only:
                stack.append((dependency, f"{path} -> {dependency}"))
    return found


def self_test():
    good = {"products": [{"type": {"library": ["automatic"]}, "targets": ["A"]}],
            "targets": [{"name": "A", "dependencies": [
                {"byName": ["B", None]},
                {"target": ["CSodium", {"platformNames": ["linux", "android"], "traits": ["SystemLibraries"]}]},
                {"target": ["CurlTransport", {"platformNames": ["linux"], "traits": ["SystemLibraries"]}]}]},
                {"name": "B", "dependencies": []}]}
    bad = json.loads(json.dumps(good))
    bad["targets"][1]["dependencies"] = [{"byName": ["CLibCrypto", None]}, {"byName": ["CCurl", None]}]
    assert problems(good) == [], problems(good)
    assert len(problems(bad)) == 2, problems(bad)
    print("check_apple_dependencies: self-test passed")


def main():
    if "--self-test" in sys.argv:
        self_test()
        return
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
    found = problems(package)
    for problem in found:
        print(problem)
    if found:
        sys.exit(1)
    print("check_apple_dependencies: library products need no system library on Apple platforms")


main()
