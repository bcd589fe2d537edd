#!/usr/bin/env python3
"""Every Swift snippet in the README and the documentation, compiled by the test command.

Reads the ```swift blocks of README.md, Documentation/**/*.md, the DocC catalogs
(Sources/*/*.docc/**/*.md) and the DocC comments of Sources/**/*.swift, and

- writes each one as a file of the SnippetTests test target (Tests/SnippetTests/Generated/,
  ignored by git), with #sourceLocation pointing at the document, so the `swift test` that follows
  compiles them with the package and reports an error at the snippet's own line. A snippet that
  declares a `@Test` runs with the other tests; one that imports `CurlTransport` is compiled where
  libcurl is (`#if canImport(CCurl)`: not on iOS, tvOS, watchOS, visionOS);
- checks each complete Package.swift snippet by loading it against this package (products and
  package names must resolve) without building anything;
- checks that every module a snippet imports is a library product of this package (or a system
  module), and that the README's package snippet lists every product the README's and Getting
  Started's snippets import.

A snippet is a complete Swift file: imports, then declarations (types, functions, `@Test`s); no
top-level statements. The line just before a block may mark it with an HTML comment, which GitHub
and DocC do not render:

    <!-- snippet: apple-only REASON -->  compiled only where Darwin is (a Keychain store); skipped here
    <!-- snippet: manifest -->           a complete Package.swift, loaded against this package
    <!-- snippet: fragment REASON -->    not compiled (it needs the reader's own code); keep these rare

Skipped snippets are listed with their reason. Exit status 1 on any failed check.

    python3 scripts/check_snippets.py            # generate, check manifests and imports
    python3 scripts/check_snippets.py --list     # also list every snippet and what happens to it
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "Tests" / "SnippetTests" / "Generated"
PACKAGE_IDENTITY = "swift-cipher-station"
SYSTEM_MODULES = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Testing", "XCTest", "Dispatch",
                  "Security", "CryptoKit", "UIKit", "Darwin", "Glibc", "PackageDescription", "os", "Synchronization"}
MARKER = re.compile(r"<!--\s*snippet:\s*(apple-only|manifest|fragment)\b\s*(.*?)\s*-->")
APP_DOCUMENTS = {"README.md", "Sources/StationClient/StationClient.docc/GettingStarted.md"}


@dataclass
class Snippet:
    document: str          # path relative to ROOT
    line: int              # 1-based line of the first code line
    code: str
    kind: str = "compiled"  # compiled | apple-only | manifest | fragment
    reason: str = ""
    imports: list = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.document}:{self.line}"


def documents():
    yield ROOT / "README.md"
    for pattern in ("Documentation/**/*.md", "Sources/*/*.docc/**/*.md"):
        yield from sorted(ROOT.glob(pattern))


def doc_comment_lines(lines: list) -> list:
    """The text of each `///` line (without the marker and one space), `None` for other lines."""
    result = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("///"):
            text = stripped[3:]
            result.append(text[1:] if text.startswith(" ") else text)
        else:
            result.append(None)
    return result


def markdown_snippets(path: Path, lines: list) -> list:
    """The ```swift blocks of `lines` (`None` entries are outside any comment and end a block)."""
    snippets = []
    relative = str(path.relative_to(ROOT))
    index = 0
    while index < len(lines):
        text = lines[index]
        if text is None or text.strip() != "```swift":
            index += 1
            continue
        previous = lines[index - 1] if index > 0 else None
        marker = MARKER.search(previous) if previous else None
        start = index + 2
        body = []
        index += 1
        while index < len(lines) and lines[index] is not None and lines[index].strip() != "```":
            body.append(lines[index])
            index += 1
        if index >= len(lines) or lines[index] is None:
            raise SystemExit(f"{relative}:{start - 1}: unterminated ```swift block")
        snippet = Snippet(relative, start, "\n".join(body) + "\n")
        if marker:
            snippet.kind, snippet.reason = marker.group(1), marker.group(2)
        snippet.imports = re.findall(r"^\s*(?:@testable\s+|@_exported\s+)?import\s+(\w+)", snippet.code, re.M)
        snippets.append(snippet)
        index += 1
    return snippets


def collect() -> list:
    snippets = []
    for path in documents():
        snippets += markdown_snippets(path, path.read_text(encoding="utf-8").splitlines())
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        text = path.read_text(encoding="utf-8")
        if "```swift" in text:
            snippets += markdown_snippets(path, doc_comment_lines(text.splitlines()))
    return snippets


def package_products_and_snippet_dependencies():
    """The library products of Package.swift and the dependencies of its SnippetTests target."""
    manifest = (ROOT / "Package.swift").read_text(encoding="utf-8")
    products = set(re.findall(r'\.library\(name:\s*"(\w+)"', manifest))
    target = re.search(r'\.testTarget\(\s*name:\s*"SnippetTests",\s*dependencies:\s*\[(.*?)\]', manifest, re.S)
    dependencies = set(re.findall(r'"(\w+)"', target.group(1))) if target else set()
    return products, dependencies


def write_generated(snippets: list) -> int:
    if GENERATED.exists():
        shutil.rmtree(GENERATED)
    GENERATED.mkdir(parents=True)
    count = 0
    for number, snippet in enumerate(snippets):
        if snippet.kind not in ("compiled", "apple-only"):
            continue
        stem = re.sub(r"[^A-Za-z0-9]+", "_", Path(snippet.document).with_suffix("").as_posix()).strip("_")
        name = f"{stem}_L{snippet.line}.swift"
        body = [f"// Generated by scripts/check_snippets.py from {snippet.where}; edit the document, not this file.",
                f'#sourceLocation(file: "{ROOT / snippet.document}", line: {snippet.line})',
                snippet.code.rstrip("\n"),
                "#sourceLocation()"]
        if snippet.kind == "apple-only":
            body = [body[0], "#if canImport(Darwin)"] + body[1:] + ["#endif"]
        elif "CurlTransport" in snippet.imports:
            # CurlTransport is empty where libcurl is absent (iOS, tvOS, watchOS, visionOS).
            body = [body[0], "#if canImport(CCurl)"] + body[1:] + ["#endif"]
        (GENERATED / name).write_text("\n".join(body) + "\n", encoding="utf-8")
        count += 1
    return count


def top_level_statements(snippet: Snippet) -> list:
    """Lines at brace depth 0 that start a statement rather than a declaration (a snippet file
    of a test target may hold declarations only)."""
    declaration = re.compile(
        r"^(import|@|struct|final|class|enum|actor|protocol|extension|func|let|var|typealias|public|private|"
        r"fileprivate|internal|nonisolated|#if|#else|#elseif|#endif|//|/\*|\*|}|\)|\]|$)")
    problems = []
    depth = 0
    for offset, line in enumerate(snippet.code.splitlines()):
        stripped = line.strip()
        if depth == 0 and stripped and not declaration.match(stripped):
            problems.append(f"{snippet.document}:{snippet.line + offset}: a top-level statement: {stripped[:60]!r} "
                            "(a snippet holds declarations only: put the code in a function)")
        code = re.sub(r'"(?:[^"\\]|\\.)*"', '""', stripped.split("//")[0])
        depth += code.count("{") + code.count("(") + code.count("[") - code.count("}") - code.count(")") - code.count("]")
    return problems


def check_manifest(snippet: Snippet) -> list:
    """Loads a Package.swift snippet against this package: a scratch folder holds the manifest,
    empty sources for its targets, and `swift-cipher-station`, a link to this checkout, which the
    snippet's `.package(path: "../swift-cipher-station")` names."""
    if '.package(path: "../swift-cipher-station")' not in snippet.code:
        return [f"{snippet.where}: a manifest snippet depends on this package as "
                '.package(path: "../swift-cipher-station") (the README says why)']
    scratch = Path(tempfile.mkdtemp(prefix="cipher-snippet-manifest-"))
    try:
        (scratch / PACKAGE_IDENTITY).symlink_to(ROOT, target_is_directory=True)
        app = scratch / "app"
        app.mkdir()
        (app / "Package.swift").write_text(snippet.code, encoding="utf-8")
        for kind, name in re.findall(r'\.(target|testTarget|executableTarget)\(\s*name:\s*"(\w+)"', snippet.code):
            folder = app / ("Tests" if kind == "testTarget" else "Sources") / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "main.swift" if kind == "executableTarget" else folder / "Empty.swift").write_text("\n")
        result = subprocess.run(["swift", "package", "--package-path", str(app), "plugin", "--list"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            output = (result.stderr or result.stdout).strip().replace(str(app), "<snippet>")
            return [f"{snippet.where}: the manifest does not load against this package: {output}"]
        return []
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    listing = "--list" in sys.argv[1:]
    snippets = collect()
    products, dependencies = package_products_and_snippet_dependencies()
    problems = []

    for snippet in snippets:
        if snippet.kind in ("compiled", "apple-only"):
            problems += top_level_statements(snippet)
            for module in snippet.imports:
                if module in SYSTEM_MODULES:
                    continue
                if module not in products:
                    problems.append(f"{snippet.where}: imports {module}, which is not a library product of this package")
                elif module not in dependencies:
                    problems.append(f"{snippet.where}: imports {module}: add it to the SnippetTests target's dependencies")

    manifests = [s for s in snippets if s.kind == "manifest"]
    for snippet in manifests:
        problems += check_manifest(snippet)

    # The README's dependency list must be enough for the README's and Getting Started's code.
    readme_manifests = [s for s in manifests if s.document == "README.md"]
    if not readme_manifests:
        problems.append("README.md: no package snippet (<!-- snippet: manifest -->)")
    else:
        listed = set(re.findall(r'\.product\(name:\s*"(\w+)"', "".join(s.code for s in readme_manifests)))
        for snippet in snippets:
            if snippet.document in APP_DOCUMENTS and snippet.kind != "manifest":
                for module in snippet.imports:
                    if module in products and module not in listed:
                        problems.append(f"{snippet.where}: imports {module}, which the README's package snippet does not list")

    compiled = write_generated(snippets)
    skipped = [s for s in snippets if s.kind in ("fragment",)] + (
        [s for s in snippets if s.kind == "apple-only"] if sys.platform != "darwin" else [])
    if listing:
        for snippet in snippets:
            print(f"  {snippet.kind:<10} {snippet.where}{'  (' + snippet.reason + ')' if snippet.reason else ''}")
    for snippet in skipped:
        what = "apple-only, compiled on Apple platforms only" if snippet.kind == "apple-only" else "fragment, not compiled"
        print(f"snippet skipped here: {snippet.where}: {what}: {snippet.reason or 'no reason given'}")
    print(f"snippets: {compiled} written to {GENERATED.relative_to(ROOT)} for swift test to compile, "
          f"{len(manifests)} package manifest(s) loaded, {len(skipped)} skipped on this platform")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print(f"check_snippets: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
