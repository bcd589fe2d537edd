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
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        var parts: [FormPart] = []
        guard var position = find(delimiter, in: bytes, from: 0) else { throw Failure.malformed }
        position += delimiter.count
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if bytes.count >= position + 2, bytes[position] == 0x2D, bytes[position + 1] == 0x2D { return parts }
            guard bytes.count >= position + 2, bytes[position] == 0x0D, bytes[position + 1] == 0x0A else { throw Failure.malformed }
            position += 2
            guard let headEnd = find([0x0D, 0x0A, 0x0D, 0x0A], in: bytes, from: position) else { throw Failure.malformed }
            let head = String(decoding: bytes[position..<headEnd], as: UTF8.self)
            let contentStart = headEnd + 4
            guard let next = find([0x0D, 0x0A] + delimiter, in: bytes, from: contentStart) else { throw Failure.malformed }
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

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = start
        let last = haystack.count - needle.count
        let first = needle[0]
        while index <= last {
            if haystack[index] == first {
                var match = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }
}
