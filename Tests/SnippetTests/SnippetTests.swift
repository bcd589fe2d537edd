// The SnippetTests target compiles every Swift snippet of the README and the documentation:
import Foundation
// `python3 scripts/check_snippets.py` (run by scripts/test.sh before `swift test`) writes them to
// Generated/ (not in git), each with a #sourceLocation pointing at its document, so a compile
// error names the article and line. See the script's header for the conventions.
import Testing

@Suite("Documentation snippets")
struct SnippetTests {
    @Test("The snippet files were generated from the documents")
    func generated() throws {
        let generated = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Generated")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: generated.path)) ?? []
        try #require(!files.isEmpty, "run python3 scripts/check_snippets.py (scripts/test.sh does) before swift test")
    }
}
