#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a `Date` in metadata (and any other JSON the SDK writes) is written.
///
/// The default, ``unixSeconds``, is the station's convention: PROTOCOL.md's metadata examples
/// carry `"created_at": 1704067200`, and other clients (Python, JavaScript) read integer Unix
/// seconds. Foundation's own `Date` encoding (seconds since 2001) is never used: other clients
/// would misread it by 31 years.
public enum JSONDateEncoding: Sendable {
    /// Whole seconds since 1970-01-01 UTC, rounded down (`1704067200`).
    case unixSeconds
    /// Seconds since 1970-01-01 UTC with their fraction (`1704067200.25`).
    case unixSecondsFractional
    /// An ISO-8601 string in UTC, whole seconds (`"2024-01-01T00:00:00Z"`).
    case iso8601
    /// The app's own form: the closure returns the JSON value for a date.
    case custom(@Sendable (Date) throws -> JSONValue)

    /// The JSON value of `date` in this form.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date that has no whole-second Unix time
    ///   (not finite, or beyond `Int64`); whatever a ``custom(_:)`` closure throws.
    public func value(of date: Date) throws -> JSONValue {
        let seconds = date.timeIntervalSince1970
        switch self {
        case .unixSeconds:
            let whole = seconds.rounded(.down)
            guard whole.isFinite, let exact = Int64(exactly: whole) else {
                throw EncodingError.invalidValue(date, .init(codingPath: [], debugDescription: "no Unix time for \(seconds)"))
            }
            return .number(JSONNumber(Int(exact)))
        case .unixSecondsFractional:
            guard seconds.isFinite else {
                throw EncodingError.invalidValue(date, .init(codingPath: [], debugDescription: "no Unix time for \(seconds)"))
            }
            return .number(JSONNumber(seconds))
        case .iso8601:
            let whole = seconds.rounded(.down)
            guard whole.isFinite, Int64(exactly: whole) != nil else {
                throw EncodingError.invalidValue(date, .init(codingPath: [], debugDescription: "no Unix time for \(seconds)"))
            }
            return .string(RFC3339.string(Date(timeIntervalSince1970: whole)))
        case .custom(let write):
            return try write(date)
        }
    }
}

/// How a `Date` in metadata (and any other JSON the SDK reads) is read.
public enum JSONDateDecoding: Sendable {
    /// Integer or fractional Unix seconds (`1704067200`, `1704067200.5`), or an ISO-8601
    /// string with a time zone and optional fractional seconds (`"2024-01-01T00:00:00Z"`,
    /// `"2024-01-01T01:00:00.5+01:00"`): what the station's other clients write.
    case flexible
    /// The app's own form: the closure reads a date from the JSON value.
    case custom(@Sendable (JSONValue) throws -> Date)

    /// Parses an ISO-8601 date-time with a time zone, with or without fractional seconds: the
    /// package's own RFC 3339 reader, the same on every platform (Foundation's ISO-8601 parsing
    /// differs between Darwin and Linux in what it accepts).
    static func iso8601Date(_ text: String) -> Date? {
        RFC3339.date(text)
    }
}

extension WireJSON {
    /// The `Date` strategies of ``WireJSON``'s encoders, under their older names.
    package typealias DateEncoding = JSONDateEncoding
    /// The `Date` strategies of ``WireJSON``'s decoders, under their older names.
    package typealias DateDecoding = JSONDateDecoding
}
