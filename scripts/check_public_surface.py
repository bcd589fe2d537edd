#!/usr/bin/env python3
"""Pins the public API: compares the public symbols of each module's symbol graph with the
checked-in list Tests/PublicSurface/<Module>.txt and fails with a diff when they differ, so the
surface cannot grow (or shrink) by accident.

Usage: check_public_surface.py [--update] [--lists DIR] SYMBOL_GRAPH_DIR MODULE...
       check_public_surface.py --self-test
  --update   rewrite the lists from the graphs (after a deliberate API change; review the diff)
  --lists    where the lists are (default: Tests/PublicSurface)
  --self-test  checks this script on a made-up symbol graph

One line per public or open symbol: its kind, its path and its declaration. Symbols the compiler
synthesizes (conformances, memberwise members) are left out, as in check_doc_comments.py. The
graphs are the ones scripts/docs.sh dumps (`swift package dump-symbol-graph --minimum-access-level
public`), so the check costs no extra build.
"""
import difflib
import glob
import json
import os
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

TYPE_KINDS = {"swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias", "swift.actor"}


def surface(directory, module):
    """The sorted lines of `module`'s public symbols, and how many of them are types."""
    files = [os.path.join(directory, f"{module}.symbols.json")]
    files += sorted(glob.glob(os.path.join(directory, f"{module}@*.symbols.json")))
    if not os.path.exists(files[0]):
        sys.exit(f"no symbol graph for {module}: {files[0]}")
    lines, types = set(), 0
    for path in files:
        extended = os.path.basename(path)[len(module) + 1:-len(".symbols.json")]
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                continue
            kind = symbol["kind"]["identifier"].removeprefix("swift.")
            name = ".".join(symbol["pathComponents"])
            if extended:
                name = f"{extended}.{name}"
            declaration = " ".join("".join(f["spelling"] for f in symbol.get("declarationFragments", [])).split())
            lines.add(f"{kind} {name}: {declaration}")
            if symbol["kind"]["identifier"] in TYPE_KINDS:
                types += 1
    return sorted(lines), types


def check(directory, modules, lists, update):
    """Compares (or with `update` rewrites) the lists; returns the modules whose surface changed."""
    failed = []
    for module in modules:
        failed += check_module(directory, module, lists, update)
    return failed


def check_module(directory, module, lists, update):
    lines, types = surface(directory, module)
    path = os.path.join(lists, f"{module}.txt")
    text = "".join(line + "\n" for line in lines)
    if update:
        os.makedirs(lists, exist_ok=True)
        with open(path, "w") as file:
            file.write(text)
        print(f"{module}: {types} public types, {len(lines)} public symbols (written to {path})")
        return []
    expected = open(path).read().splitlines() if os.path.exists(path) else []
    if expected == lines:
        print(f"{module}: {types} public types, {len(lines)} public symbols, as pinned")
        return []
    print(f"{module}: the public surface differs from {path} (- pinned, + now):")
    for line in difflib.unified_diff(expected, lines, "pinned", "now", n=0, lineterm=""):
        if not line.startswith(("---", "+++", "@@")):
            print("  " + line)
    return [module]


def self_test():
    """A made-up graph: public, open, package and synthesized symbols, checked against lists."""
    import contextlib
    import io
    import tempfile

    def symbol(path, access, kind="swift.struct", precise=None):
        return {"identifier": {"precise": precise or "s:4Fake" + path}, "accessLevel": access,
                "kind": {"identifier": kind}, "pathComponents": path.split("."),
                "declarationFragments": [{"spelling": f"struct {path.split('.')[-1]}"}]}

    with tempfile.TemporaryDirectory() as scratch:
        graphs, lists = os.path.join(scratch, "graphs"), os.path.join(scratch, "lists")
        os.makedirs(graphs)
        graph = {"symbols": [symbol("App", "public"), symbol("Open", "open", "swift.class"),
                             symbol("Wire", "package"), symbol("Hidden", "internal"),
                             symbol("App.init", "public", "swift.init", "s:4Fake3AppV::SYNTHESIZED::init")]}
        with open(os.path.join(graphs, "Fake.symbols.json"), "w") as file:
            json.dump(graph, file)
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet):
            assert check(graphs, ["Fake"], lists, update=False) == ["Fake"], "a missing list fails"
            assert check(graphs, ["Fake"], lists, update=True) == []
            pinned = open(os.path.join(lists, "Fake.txt")).read()
            assert pinned == "class Open: struct Open\nstruct App: struct App\n", pinned
            assert check(graphs, ["Fake"], lists, update=False) == [], "the same surface passes"
            graph["symbols"].append(symbol("Grown", "public"))
            with open(os.path.join(graphs, "Fake.symbols.json"), "w") as file:
                json.dump(graph, file)
            assert check(graphs, ["Fake"], lists, update=False) == ["Fake"], "a new public symbol fails"
        assert "+struct Grown: struct Grown" in quiet.getvalue(), quiet.getvalue()
    print("check_public_surface.py: self-test passed")


def main():
    arguments = sys.argv[1:]
    if arguments == ["--self-test"]:
        self_test()
        return
    update = "--update" in arguments
    arguments = [a for a in arguments if a != "--update"]
    lists = os.path.join(root, "Tests", "PublicSurface")
    if "--lists" in arguments:
        at = arguments.index("--lists")
        lists = arguments[at + 1]
        del arguments[at:at + 2]
    if len(arguments) < 2:
        sys.exit(__doc__)
    directory, modules = arguments[0], arguments[1:]
    failed = check(directory, modules, lists, update)
    if failed:
        print(f"public surface changed in {', '.join(failed)}. If that is deliberate, run\n"
              f"  python3 scripts/check_public_surface.py --update {directory} {' '.join(modules)}\n"
              "and commit the lists with a CHANGELOG line for what apps gain or must migrate.")
        sys.exit(1)


if __name__ == "__main__":
    main()
