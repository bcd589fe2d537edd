/// Why bytes could not be read as a wire model, or a model could not be written.
///
/// Every failure of `WireJSON` is one of these; nothing in `Manifest` traps on bad input.
public enum WireFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not JSON (as Python's `json.loads` reads it); `offset` is the byte where
    /// reading stopped.
    case invalidJSON(offset: Int, reason: String)
    /// Arrays and objects nest deeper than `WireJSON/maximumDepth`.
    case nestingTooDeep(offset: Int, limit: Int)
    /// A required member is missing; `path` is where (for example `clients.app.posts[0].post_cid`).
    case missingField(path: String)
    /// A value has the wrong JSON type.
    case typeMismatch(path: String, expected: String, found: String)
    /// A value has the right type but cannot be used (bad hex, a number out of range, …).
    case invalidValue(path: String, reason: String)
    /// A value could not be written as JSON.
    case encodingFailed(reason: String)

    /// A one-line explanation naming the byte offset or field path.
    public var description: String {
        switch self {
        case let .invalidJSON(offset, reason): "invalid JSON at byte \(offset): \(reason)"
        case let .nestingTooDeep(offset, limit): "JSON nests deeper than \(limit) levels (at byte \(offset))"
        case let .missingField(path): "missing field \(path)"
        case let .typeMismatch(path, expected, found): "\(path.isEmpty ? "value" : path) should be \(expected), found \(found)"
        case let .invalidValue(path, reason): "invalid \(path.isEmpty ? "value" : path): \(reason)"
        case let .encodingFailed(reason): "could not write JSON: \(reason)"
        }
    }
}

extension WireFormatError {
    /// Renders a coding path the way the error messages show it: `a.b[2].c`.
    static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue, key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    /// Maps a `DecodingError` (from a model's `init(from:)`) to the matching case.
    package static func from(_ error: DecodingError) -> WireFormatError {
        switch error {
        case let .keyNotFound(key, context):
            return .missingField(path: render(context.codingPath + [key]))
        case let .valueNotFound(type, context):
            return .typeMismatch(path: render(context.codingPath), expected: describe(type), found: "null")
        case let .typeMismatch(type, context):
            let found = context.debugDescription.hasPrefix("found ")
                ? String(context.debugDescription.dropFirst(6)) : context.debugDescription
            return .typeMismatch(path: render(context.codingPath), expected: describe(type), found: found)
        case let .dataCorrupted(context):
            return .invalidValue(path: render(context.codingPath), reason: context.debugDescription)
        @unknown default:
            return .invalidValue(path: "", reason: String(describing: error))
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "a Boolean"
        case is Double.Type, is Float.Type: return "a number"
        case is Int.Type, is Int64.Type, is Int32.Type, is Int16.Type, is Int8.Type,
             is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type, is UInt8.Type:
            return "an integer"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Dictionary") || name.hasPrefix("OrderedMap") { return "an object" }
            if name.hasPrefix("Array") { return "an array" }
            return name
        }
    }
}
