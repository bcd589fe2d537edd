#if canImport(CCurl)
import Foundation

/// Reads the response head one line at a time, as libcurl's header callback delivers it.
enum ResponseHeadParser {
    enum Line: Equatable {
        /// The empty line that ends a header block.
        case endOfBlock
        /// A status line such as `HTTP/1.1 200 OK`, with its code.
        case status(Int)
        /// A folded line continuing the previous field's value.
        case continuation(String)
        /// `Name: value`.
        case field(name: String, value: String)
        /// Anything else (a line without a colon): skipped rather than trusted.
        case ignored
    }

    static func parse(line raw: [UInt8]) -> Line { parse(line: raw[...]) }

    static func parse(line raw: ArraySlice<UInt8>) -> Line {
        var line = raw
        while let last = line.last, last == 0x0A || last == 0x0D { line = line.dropLast() }
        guard let first = line.first else { return .endOfBlock }
        if first == 0x20 || first == 0x09 { return .continuation(decode(trimWhitespace(line))) }
        if line.starts(with: "HTTP/".utf8) {
            // "HTTP/1.1 200 OK" or "HTTP/2 200": exactly three digits after the first space.
            guard let space = line.firstIndex(of: 0x20) else { return .ignored }
            let digits = line[(space + 1)...].prefix(while: { $0 != 0x20 })
            guard digits.count == 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let code = Int(String(decoding: digits, as: UTF8.self))
            else { return .ignored }
            return .status(code)
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return .ignored }
        return .field(name: decode(trimWhitespace(line[..<colon])), value: decode(trimWhitespace(line[(colon + 1)...])))
    }

    /// Header text is UTF-8 in practice; anything else is read as ISO-8859-1, byte for character,
    /// so no byte is lost or replaced.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        // Decoding replaces each invalid sequence with U+FFFD (valid UTF-8 no invalid byte equals),
        // so the bytes came through unchanged exactly when they were valid UTF-8.
        let text = String(decoding: bytes, as: UTF8.self)
        if text.utf8.elementsEqual(bytes) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func trimWhitespace(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }
}
#endif
