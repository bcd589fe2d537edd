"""Fails when a public symbol of the given modules has no doc comment.

Usage: check_doc_comments.py SYMBOL_GRAPH_DIR MODULE...
Symbols the compiler synthesizes (protocol conformances, memberwise members) are skipped.
"""
import glob
import json
import os
import sys

directory, modules = sys.argv[1], sys.argv[2:]
missing = []
counted = 0
for module in modules:
    files = [os.path.join(directory, f"{module}.symbols.json")]
    files += glob.glob(os.path.join(directory, f"{module}@*.symbols.json"))
    for path in files:
        if not os.path.exists(path):
            sys.exit(f"no symbol graph for {module}: {path}")
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                continue
            counted += 1
            if not symbol.get("docComment"):
                name = ".".join(symbol["pathComponents"])
                missing.append(f"{module}: {name} ({symbol['kind']['displayName']})")
for line in missing:
    print(f"missing doc comment: {line}")
print(f"{counted} public symbols in {len(modules)} modules, {len(missing)} without a doc comment")
sys.exit(1 if missing else 0)
