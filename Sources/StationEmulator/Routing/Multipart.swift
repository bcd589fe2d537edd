import Foundation

/// One part of a `multipart/form-data` body.
struct FormPart: Sendable {
    var name: String
    var filename: String?
    var contentType: String?
    var data: Data

    /// The part's value as text (what Starlette gives a field without a filename).
    var text: String { String(decoding: data, as: UTF8.self) }
}

/// Parses `multipart/form-data` bodies the way the station's stack does for its forms.
enum MultipartParser {
    enum Failure: Error { case malformed }

    /// The boundary parameter of a `multipart/form-data` content type, or `nil` when the content
    /// type is something else (then the form is empty, as in Starlette).
    static func boundary(contentType: String?) -> String?? {
        guard let contentType else { return .some(nil) }
        let pieces = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let kind = pieces.first, kind.lowercased() == "multipart/form-data" else { return .some(nil) }
        for piece in pieces.dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty ? nil : .some(value)
        }
        return nil  // multipart without a boundary: malformed
    }

    /// Splits `body` into parts.
    /// - Throws: `Failure.malformed` when the body is not valid multipart with this boundary.
    static func parse(_ body: Data, boundary: String) throws -> [FormPart] {
        var steps = 0
        return try parse(body, boundary: boundary, steps: &steps)
    }

    /// Splits `body` into parts, adding to `steps` the search steps taken: at most twice the body's
    /// length plus the needles' lengths, whatever the boundary (every search is linear, and each
    /// starts where the last one ended), so an unauthenticated body cannot make parsing quadratic.
    static func parse(_ body: Data, boundary: String, steps: inout Int) throws -> [FormPart] {
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        let delimiterSearch = BytePattern(delimiter, steps: &steps)
        let partEndSearch = BytePattern([0x0D, 0x0A] + delimiter, steps: &steps)
        let headEndSearch = BytePattern([0x0D, 0x0A, 0x0D, 0x0A], steps: &steps)
        var parts: [FormPart] = []
        guard var position = delimiterSearch.firstIndex(in: bytes, from: 0, steps: &steps) else { throw Failure.malformed }
        position += delimiter.count
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if bytes.count - position >= 2, bytes[position] == 0x2D, bytes[position + 1] == 0x2D { return parts }
            guard bytes.count - position >= 2, bytes[position] == 0x0D, bytes[position + 1] == 0x0A else { throw Failure.malformed }
            position += 2
            guard let headEnd = headEndSearch.firstIndex(in: bytes, from: position, steps: &steps) else { throw Failure.malformed }
            let head = String(decoding: bytes[position..<headEnd], as: UTF8.self)
            let contentStart = headEnd + 4
            guard let next = partEndSearch.firstIndex(in: bytes, from: contentStart, steps: &steps) else { throw Failure.malformed }
            var part = FormPart(name: "", filename: nil, contentType: nil, data: Data(bytes[contentStart..<next]))
            var named = false
            for line in head.components(separatedBy: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if field == "content-disposition" {
                    let parameters = dispositionParameters(value)
                    if let name = parameters["name"] { part.name = name; named = true }
                    part.filename = parameters["filename"]
                } else if field == "content-type" {
                    part.contentType = value
                }
            }
            guard named else { throw Failure.malformed }
            parts.append(part)
            position = next + 2 + delimiter.count
        }
    }

    private static func dispositionParameters(_ value: String) -> [String: String] {
        var result: [String: String] = [:]
        var rest = Substring(value)
        // Skip the disposition type.
        guard let firstSemicolon = rest.firstIndex(of: ";") else { return result }
        rest = rest[rest.index(after: firstSemicolon)...]
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == ";" }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            var parsed = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped { parsed.append(character); escaped = false; continue }
                    if character == "\\" { escaped = true; continue }
                    if character == "\"" { break }
                    parsed.append(character)
                }
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                parsed = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            result[key] = parsed
        }
        return result
    }

}

/// A byte string searched for with Knuth–Morris–Pratt: linear in the haystack whatever the needle
/// (a boundary of 8,000 dashes in a body of dashes costs no more than any other).
struct BytePattern {
    let needle: [UInt8]
    /// `border[i]`: the length of the longest proper prefix of `needle[0...i]` that is also its suffix.
    private let border: [Int]

    /// Prepares `needle`, adding its preprocessing steps (at most twice its length) to `steps`.
    init(_ needle: [UInt8], steps: inout Int) {
        self.needle = needle
        var border = [Int](repeating: 0, count: needle.count)
        var length = 0
        var index = 1
        while index < needle.count {
            steps += 1
            if needle[index] == needle[length] {
                length += 1
                border[index] = length
                index += 1
            } else if length > 0 {
                length = border[length - 1]
            } else {
                index += 1
            }
        }
        self.border = border
    }

    /// The first index at or after `start` where the needle begins in `haystack`, or `nil`;
    /// adds its steps (at most twice the bytes searched) to `steps`.
    func firstIndex(in haystack: [UInt8], from start: Int, steps: inout Int) -> Int? {
        guard !needle.isEmpty, start >= 0 else { return nil }
        var index = start
        var matched = 0
        while index < haystack.count {
            steps += 1
            if haystack[index] == needle[matched] {
                matched += 1
                index += 1
                if matched == needle.count { return index - matched }
            } else if matched > 0 {
                matched = border[matched - 1]
            } else {
                index += 1
            }
        }
        return nil
    }
}
