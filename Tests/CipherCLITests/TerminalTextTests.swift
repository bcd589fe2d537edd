// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
@testable import CipherCLI
import Testing

@Suite("Untrusted text is escaped for the terminal")
struct TerminalTextTests {
    @Test func controlAndBidiCharactersBecomeEscapes() {
        let hostile = "a\u{1b}[2Kb\u{07}c\rd\ne\u{7f}f\u{9b}g\u{202e}h\u{2066}i"
        #expect(TerminalText.escapingControlCharacters(in: hostile)
            == #"a\u{1b}[2Kb\u{7}c\u{d}d\u{a}e\u{7f}f\u{9b}g\u{202e}h\u{2066}i"#)
        #expect(TerminalText.escapingControlCharacters(in: "résumé 📄 (1).pdf") == "résumé 📄 (1).pdf")
    }

    @Test func onlyInterpolatedValuesAreEscaped() {
        let name = "x\u{1b}]0;owned\u{07}"
        let error: any Error = CLIError.failure("bad\rline")
        let line: TerminalText = "saved \(name)\n\(error) \(trusted: "own\ttext")"
        #expect(line.rendered == "saved x\\u{1b}]0;owned\\u{7}\nbad\\u{d}line own\ttext")
    }
}
#endif
