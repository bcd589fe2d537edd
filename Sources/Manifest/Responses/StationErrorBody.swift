import OrderedJSON

/// One entry of a 422 validation error (`{"detail": [{type, loc, msg, input}, …]}`), as FastAPI
/// reports a missing `x-cipher-*` header or body field.
struct ValidationIssue: Sendable, Hashable, Decodable {
    /// The error type, e.g. `missing`.
    var type: String?
    /// Where: e.g. `["header", "x-cipher-uid"]` (list indices as decimal text).
    var location: [String]
    /// The message, e.g. `Field required`.
    var message: String?
    /// The offending input, as sent back by the station.
    var input: JSONValue?

    private enum CodingKeys: String, CodingKey {
        case type, location = "loc", message = "msg", input
    }

    /// Reads an issue; every field is optional.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the entry is not an object.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = container.lenient(String.self, .type)
        location = (container.lenient([JSONValue].self, .location) ?? []).map { $0.stringValue ?? $0.description }
        message = container.lenient(String.self, .message)
        input = container.lenient(JSONValue.self, .input)
    }

    /// `header.x-cipher-uid: Field required`.
    var text: String {
        let place = location.joined(separator: ".")
        let what = message ?? type ?? "invalid"
        return place.isEmpty ? what : "\(place): \(what)"
    }
}

/// A station error body in any of its four shapes, with one human message.
///
/// - `{"detail": "<text>"}`: 400, 401, 403, 404, 416, 429, 503.
/// - `{"detail": [{type, loc, msg, input}, …]}`: 422 validation errors (missing headers too).
/// - `{"error": "<text>"}`: 413 (body larger than the station's limit).
/// - `{"status": "ok", "result": {"error": "<text>"}}`: **HTTP 200** logic errors of `/rewrap`
///   and `/inbox`.
///
/// Plus ``Shape/plainText`` for a non-JSON body (h11's `Invalid HTTP request received.`).
package struct StationErrorBody: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// Which shape the body had.
    enum Shape: Sendable, Hashable {
        /// `{"detail": "…"}` (or another non-list `detail` value).
        case detail
        /// `{"detail": [ … ]}`.
        case validation
        /// `{"error": "…"}`.
        case error
        /// `{"result": {"error": "…"}}`, sent with HTTP 200.
        case resultError
        /// A body that is not JSON.
        case plainText
    }

    /// The shape.
    let shape: Shape
    /// The station's message: the `detail`/`error` text, or the validation entries joined with
    /// `; ` (`header.x-cipher-uid: Field required; …`).
    package let message: String
    /// The entries of a validation error (empty for other shapes).
    let validationIssues: [ValidationIssue]

    /// Creates a body.
    init(shape: Shape, message: String, validationIssues: [ValidationIssue] = []) {
        self.shape = shape
        self.message = message
        self.validationIssues = validationIssues
    }

    /// The message.
    package var description: String { message }

    /// Reads an error body of any shape from raw bytes. Returns `nil` for an empty body and for
    /// JSON with none of the four shapes (a success body). A body that is not JSON becomes
    /// ``Shape/plainText`` (at most 1,000 characters of it).
    package static func parse(_ body: [UInt8]) -> StationErrorBody? {
        guard !body.isEmpty else { return nil }
        do throws(WireFormatError) {
            return try WireJSON.decode(StationErrorBody.self, from: body)
        } catch where error.isSyntaxError {
            let text = String(decoding: body.prefix(4000), as: UTF8.self)
            let trimmed = pythonStrip(String(text.prefix(1000)))
            return trimmed.isEmpty ? nil : StationErrorBody(shape: .plainText, message: trimmed)
        } catch {
            return nil
        }
    }

    private enum CodingKeys: String, CodingKey {
        case detail, error, result
    }

    /// Reads the first shape that matches: `detail`, then `error`, then `result.error`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the JSON has none of the shapes.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let detail = container.lenient(JSONValue.self, .detail), !detail.isNull {
            if let text = detail.stringValue {
                self.init(shape: .detail, message: text)
            } else if let list = container.lenient([ValidationIssue].self, .detail) {
                self.init(shape: .validation, message: list.map(\.text).joined(separator: "; "), validationIssues: list)
            } else {
                self.init(shape: .detail, message: detail.description)
            }
        } else if let text = container.lenient(String.self, .error) {
            self.init(shape: .error, message: text)
        } else if let result = container.lenient(JSONObject.self, .result), let text = result["error"]?.stringValue {
            self.init(shape: .resultError, message: text)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a station error body"))
        }
    }
}
