#!/usr/bin/env python3
"""Keeps the module graph as the README draws it: data flows downward and nothing points up.

The README's "Architecture" table is the declaration: one row per library or system target with its
layer and the targets it depends on. Against `swift package dump-package` this script checks that
  1. every library and system target of the package has a row, and no row names a missing target;
  2. each row's "depends on" column is exactly the target's declared dependencies (so the README
     shows the graph as built, not as once planned);
  3. every dependency sits on a lower layer than its dependent (nothing points up);
  4. no client module (what an app links) depends on a testing module (the emulator, the loopback
     server, the conformance suite), and the conformance suite needs only `Transport` and
     `LoopbackHTTP`;
  5. `Package.swift` says the same: the comment above each library or system target starts with
     `// Layer N:`, N its README layer, and above each executable with `// On top:`; the section
     Package.swift's header points to exists.
That every `import` names a declared dependency SwiftPM checks itself: the test command builds with
`--explicit-target-dependency-import-check error`.

Usage: check_module_graph.py [--package-json FILE] [--readme FILE] [--manifest FILE]
       check_module_graph.py --print-rows   (rows for a new target: each layer one above its highest dependency)
       check_module_graph.py --self-test
"""
import json
import os
import re
import subprocess
import sys

from _common import report

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# What an app links: none of these may depend on a testing module.
CLIENT_MODULES = {
    "PQCrypto", "SHA2", "ClassicalCrypto", "Envelope", "Signing", "OrderedJSON", "ContentAddressing",
    "Manifest", "Transport", "CurlTransport", "URLSessionTransport", "StationClient", "DriveSync",
}
TESTING_MODULES = {"StationEmulator", "LoopbackHTTP", "HTTPTransportConformance"}
CONFORMANCE_MAY_USE = {"Transport", "LoopbackHTTP"}

TARGET_DECLARATION = re.compile(r"\.(target|systemLibrary|executableTarget)\(\s*name:\s*\"([A-Za-z0-9_]+)\"")
LAYER_COMMENT = re.compile(r"^\s*// (?:Layer (\d+)|On top):")
ROW = re.compile(r"^\|\s*`(?P<name>[A-Za-z0-9_]+)`\s*\|\s*(?P<layer>\d+)\s*\|(?P<deps>[^|]*)\|")
IMPORT = re.compile(r"^\s*(?:@testable\s+|@_exported\s+|(?:public|package|internal)\s+)?import\s+(?:struct\s+|class\s+|enum\s+|func\s+)?([A-Za-z0-9_]+)")


def dependency_names(target):
    names = []
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                names.append(dependency[kind][0])
    return names


def readme_rows(text):
    """The Architecture section's rows: name -> (layer, set of dependencies)."""
    rows = {}
    section = re.search(r"^## Architecture\n(.*?)(?=^## )", text, re.S | re.M)
    if not section:
        return None
    for line in section.group(1).splitlines():
        match = ROW.match(line)
        if match:
            deps = set(re.findall(r"`([A-Za-z0-9_]+)`", match.group("deps")))
            rows[match.group("name")] = (int(match.group("layer")), deps)
    return rows


def source_directory(package_root, target):
    if target.get("path"):
        return os.path.join(package_root, target["path"])
    folder = "Tests" if target["type"] == "test" else "Sources"
    return os.path.join(package_root, folder, target["name"])


def check(package, readme_text, package_root, manifest_text):
    problems = []
    targets = {t["name"]: t for t in package["targets"]}
    declared = {name: set(dependency_names(t)) for name, t in targets.items()}
    rows = readme_rows(readme_text)
    if rows is None:
        return ["README.md has no '## Architecture' section"]

    libraries = {n for n, t in targets.items() if t["type"] in ("regular", "system") and not source_directory("", t).startswith(("Tests/", "Examples/", "Benchmarks/"))}
    for name in sorted(libraries - rows.keys()):
        problems.append(f"{name}: no row in the README's Architecture table")
    for name in sorted(rows.keys() - targets.keys()):
        problems.append(f"{name}: a README row names a target the package does not have")

    for name, (layer, deps) in sorted(rows.items()):
        if name not in targets:
            continue
        if deps != declared[name]:
            problems.append(f"{name}: README says it depends on {sorted(deps)}, Package.swift on {sorted(declared[name])}")
        for dependency in sorted(declared[name]):
            if dependency in rows and rows[dependency][0] >= layer:
                problems.append(f"{name} (layer {layer}) depends on {dependency} (layer {rows[dependency][0]}): it points up or sideways")

    for name in sorted(CLIENT_MODULES & targets.keys()):
        for dependency in sorted(declared[name] & TESTING_MODULES):
            problems.append(f"{name} is a client module but depends on the testing module {dependency}")
    if "HTTPTransportConformance" in targets:
        extra = declared["HTTPTransportConformance"] - CONFORMANCE_MAY_USE
        if extra:
            problems.append(f"HTTPTransportConformance depends on {sorted(extra)}: it may use only {sorted(CONFORMANCE_MAY_USE)}")

    problems += manifest_comment_problems(manifest_text, rows, targets)
    return problems


def manifest_comment_problems(text, rows, targets):
    """Package.swift's comments against the README: each target's comment names its layer."""
    problems = []
    header = re.search(r'See "([^"]+)" in README\.md', text)
    if not header or header.group(1) != "Architecture":
        problems.append('Package.swift: its header must point to "Architecture" in README.md')
    lines = text.splitlines()
    seen = set()
    for match in TARGET_DECLARATION.finditer(text):
        kind, name = match.groups()
        if name not in targets or targets[name]["type"] == "test" or name in seen:
            continue
        seen.add(name)
        line = text.count("\n", 0, match.start())
        # The comment block right above the declaration (blank lines and code end it).
        comment = None
        for previous in range(line - 1, -1, -1):
            stripped = lines[previous].strip()
            if not stripped.startswith("//"):
                break
            if LAYER_COMMENT.match(lines[previous]):
                comment = LAYER_COMMENT.match(lines[previous])
        if kind == "executableTarget":
            if comment is None or comment.group(1) is not None:
                problems.append(f"Package.swift: the comment above {name} must start with '// On top:'")
            continue
        if name.endswith("Support") and targets[name].get("path", "").startswith("Tests/"):
            continue
        if comment is None or comment.group(1) is None:
            problems.append(f"Package.swift: the comment above {name} must start with '// Layer N:'")
        elif name in rows and int(comment.group(1)) != rows[name][0]:
            problems.append(f"Package.swift says {name} is on layer {comment.group(1)}, the README on layer {rows[name][0]}")
    return problems


def dump_package():
    output = subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def self_test():
    """Plants each kind of violation in a made-up package and checks that each is caught."""
    def package(deps):
        return {"targets": [
            {"name": "Low", "type": "regular", "dependencies": []},
            {"name": "High", "type": "regular", "dependencies": [{"byName": [d, None]} for d in deps]},
            {"name": "StationEmulator", "type": "regular", "dependencies": [{"byName": ["Low", None]}]},
            {"name": "HighTests", "type": "test", "dependencies": [{"byName": ["High", None]}]},
        ]}
    readme = ("## Architecture\n| target | layer | depends on | holds |\n|---|---|---|---|\n"
              "| `Low` | 1 | — | x |\n| `High` | 2 | `Low` | y |\n| `StationEmulator` | 3 | `Low` | z |\n## Next\n")
    manifest = ('// See "Architecture" in README.md\n'
                '        // Layer 1: low.\n        .target(name: "Low"),\n'
                '        // Layer 2: high.\n        .target(name: "High", dependencies: ["Low"]),\n'
                '        // Layer 3: the emulator.\n        .target(name: "StationEmulator", dependencies: ["Low"]),\n'
                '        .testTarget(name: "HighTests", dependencies: ["High"]),\n')
    failures = []
    def expect(label, problems, fragment):
        if fragment is None and problems:
            failures.append(f"{label}: expected no findings, got {problems}")
        if fragment is not None and not any(fragment in p for p in problems):
            failures.append(f"{label}: expected a finding with {fragment!r}, got {problems}")

    def run(deps, readme_text=readme, manifest_text=manifest):
        return check(package(deps), readme_text, ".", manifest_text)
    expect("clean", run(["Low"]), None)
    expect("README out of date", run(["Low", "StationEmulator"]), "README says")
    expect("points up", run(["Low"], readme.replace("| `Low` | 1 |", "| `Low` | 2 |")), "points up")
    expect("missing row", run(["Low"], readme.replace("| `Low` | 1 | — | x |\n", "")), "no row")
    client = package(["Low", "StationEmulator"])
    client["targets"][1]["name"] = "StationClient"
    expect("client on emulator", check(client, readme.replace("`High`", "`StationClient`").replace("| `Low` | y |", "| `Low`, `StationEmulator` | y |"), ".",
                                       manifest.replace('"High"', '"StationClient"')), "testing module")
    expect("no section", run(["Low"], "# nothing\n"), "no '## Architecture'")
    expect("manifest layer differs", run(["Low"], manifest_text=manifest.replace("// Layer 2: high", "// Layer 3: high")), "Package.swift says High is on layer 3")
    expect("manifest comment missing", run(["Low"], manifest_text=manifest.replace("        // Layer 2: high.\n", "")), "the comment above High")
    expect("header points nowhere", run(["Low"], manifest_text=manifest.replace('"Architecture"', '"Layers"')), "its header must point")
    if failures:
        print("\n".join(failures))
        return 1
    print("check_module_graph self-test: every planted violation found, the clean package passes")
    return 0


def print_rows(package):
    """Rows for the README table, each target one layer above its highest dependency."""
    targets = {t["name"]: t for t in package["targets"]}
    layers = {}
    def layer(name):
        if name not in layers:
            deps = [d for d in dependency_names(targets[name]) if d in targets]
            layers[name] = 0 if targets[name]["type"] == "system" else 1 + max([layer(d) for d in deps], default=0)
        return layers[name]
    for name, target in targets.items():
        if target["type"] in ("regular", "system") and not source_directory("", target).startswith(("Tests/", "Examples/", "Benchmarks/")):
            deps = ", ".join(f"`{d}`" for d in dependency_names(target)) or "—"
            print(f"| `{name}` | {layer(name)} | {deps} |  |")


def main(arguments):
    if "--self-test" in arguments:
        return self_test()
    package_json = arguments[arguments.index("--package-json") + 1] if "--package-json" in arguments else None
    readme_path = arguments[arguments.index("--readme") + 1] if "--readme" in arguments else os.path.join(root, "README.md")
    package = json.load(open(package_json)) if package_json else dump_package()
    if "--print-rows" in arguments:
        print_rows(package)
        return 0
    with open(readme_path, encoding="utf-8") as handle:
        readme_text = handle.read()
    manifest_path = arguments[arguments.index("--manifest") + 1] if "--manifest" in arguments else os.path.join(root, "Package.swift")
    with open(manifest_path, encoding="utf-8") as handle:
        problems = check(package, readme_text, root, handle.read())
    count = len([t for t in package["targets"]])
    return report(problems, f"check_module_graph: {len(problems)} problem(s) in {count} targets",
                  f"check_module_graph: {count} targets, every dependency points down, the README's table is the graph as built")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
