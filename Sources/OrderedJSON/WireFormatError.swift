/// Why bytes could not be read as a wire model, or a model could not be written.
///
/// Every failure of `WireJSON` is one of these; nothing in `OrderedJSON` or `Manifest` traps on
/// bad input. A struct with static members rather than an enum, so that a new reason never breaks
/// an app's `switch`: compare with `==`, or read the properties a reason carries (``offset``,
/// ``path``, ``reason``…), which are `nil` for the other reasons.
public struct WireFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case invalidJSON(offset: Int, reason: String)
        case nestingTooDeep(offset: Int, limit: Int)
        case missingField(path: String)
        case typeMismatch(path: String, expected: String, found: String)
        case invalidValue(path: String, reason: String)
        case encodingFailed(reason: String)
        case limitExceeded(path: String, limit: Int)
        case memoryLimitExceeded(limit: Int)
    }

    private let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// The bytes are not JSON (as Python's `json.loads` reads it); `offset` is the byte where
    /// reading stopped.
    public static func invalidJSON(offset: Int, reason: String) -> WireFormatError {
        WireFormatError(.invalidJSON(offset: offset, reason: reason))
    }
    /// Arrays and objects nest deeper than `WireJSON/maximumDepth`.
    public static func nestingTooDeep(offset: Int, limit: Int) -> WireFormatError {
        WireFormatError(.nestingTooDeep(offset: offset, limit: limit))
    }
    /// A required member is missing; `path` is where (for example `clients.app.posts[0].post_cid`).
    public static func missingField(path: String) -> WireFormatError { WireFormatError(.missingField(path: path)) }
    /// A value has the wrong JSON type.
    public static func typeMismatch(path: String, expected: String, found: String) -> WireFormatError {
        WireFormatError(.typeMismatch(path: path, expected: expected, found: found))
    }
    /// A value has the right type but cannot be used (bad hex, a number out of range, …).
    public static func invalidValue(path: String, reason: String) -> WireFormatError {
        WireFormatError(.invalidValue(path: path, reason: reason))
    }
    /// The document holds more than its reader allows (a manifest with more posts than its
    /// reader's limit): reading stopped at `path`, the first element past `limit`, before
    /// reading the rest.
    public static func limitExceeded(path: String, limit: Int) -> WireFormatError {
        WireFormatError(.limitExceeded(path: path, limit: limit))
    }
    /// Building the document's values would take more than `limit` bytes of memory, as its
    /// reader charges them (a fixed cost per value and container, and the bytes of long
    /// strings): reading stopped there, before allocating more.
    public static func memoryLimitExceeded(limit: Int) -> WireFormatError {
        WireFormatError(.memoryLimitExceeded(limit: limit))
    }
    /// A value could not be written as JSON.
    public static func encodingFailed(reason: String) -> WireFormatError { WireFormatError(.encodingFailed(reason: reason)) }

    /// The byte where reading stopped, for ``invalidJSON(offset:reason:)`` and
    /// ``nestingTooDeep(offset:limit:)``.
    public var offset: Int? {
        switch kind {
        case let .invalidJSON(offset, _), let .nestingTooDeep(offset, _): offset
        default: nil
        }
    }

    /// The nesting limit, for ``nestingTooDeep(offset:limit:)``; the count limit, for
    /// ``limitExceeded(path:limit:)``; the memory limit in bytes, for ``memoryLimitExceeded(limit:)``.
    public var limit: Int? {
        switch kind {
        case let .nestingTooDeep(_, limit), let .limitExceeded(_, limit), let .memoryLimitExceeded(limit): limit
        default: nil
        }
    }

    /// Where in the document (`a.b[2].c`), for ``missingField(path:)``,
    /// ``typeMismatch(path:expected:found:)``, ``invalidValue(path:reason:)`` and
    /// ``limitExceeded(path:limit:)``.
    public var path: String? {
        switch kind {
        case let .missingField(path), let .typeMismatch(path, _, _), let .invalidValue(path, _), let .limitExceeded(path, _): path
        default: nil
        }
    }

    /// What went wrong, for ``invalidJSON(offset:reason:)``, ``invalidValue(path:reason:)`` and
    /// ``encodingFailed(reason:)``.
    public var reason: String? {
        switch kind {
        case let .invalidJSON(_, reason), let .invalidValue(_, reason), let .encodingFailed(reason): reason
        default: nil
        }
    }

    /// The JSON types expected and found, for ``typeMismatch(path:expected:found:)``.
    public var mismatch: (expected: String, found: String)? {
        if case let .typeMismatch(_, expected, found) = kind { return (expected, found) }
        return nil
    }

    /// Whether the bytes are not JSON at all (``invalidJSON(offset:reason:)`` or
    /// ``nestingTooDeep(offset:limit:)``), rather than JSON of the wrong shape.
    public var isSyntaxError: Bool {
        switch kind {
        case .invalidJSON, .nestingTooDeep: true
        default: false
        }
    }

    /// A one-line explanation naming the byte offset or field path.
    public var description: String {
        switch kind {
        case let .invalidJSON(offset, reason): "invalid JSON at byte \(offset): \(reason)"
        case let .nestingTooDeep(offset, limit): "JSON nests deeper than \(limit) levels (at byte \(offset))"
        case let .missingField(path): "missing field \(path)"
        case let .typeMismatch(path, expected, found): "\(path.isEmpty ? "value" : path) should be \(expected), found \(found)"
        case let .invalidValue(path, reason): "invalid \(path.isEmpty ? "value" : path): \(reason)"
        case let .encodingFailed(reason): "could not write JSON: \(reason)"
        case let .limitExceeded(path, limit): "\(path.isEmpty ? "the document" : path) is past the limit of \(limit)"
        case let .memoryLimitExceeded(limit): "reading the JSON would take more than its memory limit of \(limit) bytes"
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
    static func from(_ error: DecodingError) -> WireFormatError {
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
