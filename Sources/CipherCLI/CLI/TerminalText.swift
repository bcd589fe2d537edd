/// Text for the terminal: the literal parts as written in the source, every interpolated value
/// with its control characters made visible.
///
/// File names, uids, paths and error texts come from a station (this one or a followed one), and
/// a terminal obeys escape sequences inside them: a name can set the window title, erase lines or
/// move the cursor to forge output. ``Console`` prints only this type, so each value is escaped
/// where it is interpolated and nothing reaches the terminal raw; `\(trusted:)` is for the tool's
/// own multi-line texts.
struct TerminalText: ExpressibleByStringInterpolation, Sendable {
    /// The text as it is printed.
    let rendered: String

    init(stringLiteral literal: String) { rendered = literal }

    init(stringInterpolation: StringInterpolation) { rendered = stringInterpolation.rendered }

    /// The tool's own text (help, usage), printed as it is.
    init(trusted text: String) { rendered = text }

    struct StringInterpolation: StringInterpolationProtocol {
        var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) { rendered.reserveCapacity(literalCapacity) }

        mutating func appendLiteral(_ literal: String) { rendered += literal }

        /// Any value, as `String(describing:)` writes it, with its control characters escaped.
        mutating func appendInterpolation<Value>(_ value: Value) {
            rendered += TerminalText.escapingControlCharacters(in: String(describing: value))
        }

        /// The tool's own text, as it is.
        mutating func appendInterpolation(trusted text: String) { rendered += text }
    }

    /// `text` with every control character (C0, DEL, C1) and every bidirectional override written
    /// as a Swift escape (`\u{1b}`), so a terminal shows it instead of obeying it.
    static func escapingControlCharacters(in text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscaping) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscaping(scalar) {
                escaped.append(contentsOf: "\\u{\(String(scalar.value, radix: 16))}".unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// Controls, and the bidi embeddings, overrides and isolates that reorder what is shown.
    private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
            || (0x2066...0x2069).contains(scalar.value)
    }
}
