import Foundation

/// A byte range to request with the `Range` header (RFC 9110 §14.1.2), for resuming downloads and
/// reading parts of large content.
public enum ByteRange: Sendable, Hashable {
    /// Bytes `lower` through `upper`, both included: `bytes=lower-upper`.
    case closed(ClosedRange<Int64>)
    /// Everything from `offset` to the end: `bytes=offset-`.
    case from(Int64)
    /// The last `length` bytes: `bytes=-length`.
    case suffix(Int64)

    /// The `Range` header value, for example `bytes=0-1023`.
    public var headerValue: String {
        switch self {
        case .closed(let range): "bytes=\(range.lowerBound)-\(range.upperBound)"
        case .from(let offset): "bytes=\(offset)-"
        case .suffix(let length): "bytes=-\(length)"
        }
    }
}

extension HTTPRequest {
    /// The requested byte range: setting it writes the `Range` header, `nil` removes it.
    ///
    /// Reading returns the range only when the header holds a single range this type can express.
    public var byteRange: ByteRange? {
        get { headers["Range"].flatMap(ByteRange.init(headerValue:)) }
        set { headers["Range"] = newValue?.headerValue }
    }
}

extension ByteRange {
    /// Parses a single-range `Range` value such as `bytes=0-99`, `bytes=100-` or `bytes=-50`;
    /// `nil` for anything else (other units, several ranges, malformed numbers, lower > upper).
    public init?(headerValue: String) {
        let text = headerValue.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes="), !text.contains(",") else { return nil }
        let spec = text.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        switch (parseDecimal(first), parseDecimal(last)) {
        case (let lower?, let upper?) where lower <= upper: self = .closed(lower...upper)
        case (let lower?, nil) where last.isEmpty: self = .from(lower)
        case (nil, let length?) where first.isEmpty: self = .suffix(length)
        default: return nil
        }
    }
}

/// The `Content-Range` of a partial response (RFC 9110 §14.4): which bytes the body holds and the
/// length of the whole representation.
public struct ContentRange: Sendable, Hashable {
    /// The bytes this response carries, or `nil` for an unsatisfied range (`bytes */length`, sent
    /// with status 416).
    public var range: ClosedRange<Int64>?
    /// The length of the whole representation, or `nil` when the server does not know it (`/*`).
    public var completeLength: Int64?

    /// Creates a content range.
    public init(range: ClosedRange<Int64>?, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses `bytes first-last/length`, `bytes first-last/*` or `bytes */length`; `nil` for any
    /// other unit, malformed numbers, `first > last`, or a range reaching past the complete length.
    public init?(headerValue: String) {
        let text = headerValue.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count)
        guard let slash = spec.firstIndex(of: "/") else { return nil }
        let rangePart = spec[..<slash], lengthPart = spec[spec.index(after: slash)...]
        let complete: Int64?
        if lengthPart == "*" {
            complete = nil
        } else {
            guard let value = parseDecimal(lengthPart) else { return nil }
            complete = value
        }
        if rangePart == "*" {
            guard complete != nil else { return nil }  // "bytes */*" says nothing
            self.init(range: nil, completeLength: complete)
            return
        }
        guard let dash = rangePart.firstIndex(of: "-"),
              let first = parseDecimal(rangePart[..<dash]),
              let last = parseDecimal(rangePart[rangePart.index(after: dash)...]),
              first <= last
        else { return nil }
        if let complete, last >= complete { return nil }
        self.init(range: first...last, completeLength: complete)
    }
}

/// Parses 1 to 18 ASCII digits (so the value always fits in `Int64`); `nil` otherwise.
private func parseDecimal(_ text: Substring) -> Int64? {
    guard !text.isEmpty, text.utf8.count <= 18,
          text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    else { return nil }
    return Int64(text)
}
