/// An ordered JSON object: keys keep the order of the document (see ``OrderedMap``).
public typealias JSONObject = OrderedMap<JSONValue>

/// Any JSON value, with objects in document order and numbers kept as written.
///
/// Use it for data whose shape belongs to an app (a public post's plaintext `metadata`, a client
/// profile) and whenever bytes must be written back exactly: `WireJSON/serialize(_:style:)`
/// writes a value the way the station's Python `json.dumps` does.
///
/// Equality is structural and order-sensitive; numbers compare by their text (`1` ≠ `1.0`).
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, in key order.
    case object(JSONObject)

    /// The string, when this is one.
    public var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    /// The Boolean, when this is one.
    public var boolValue: Bool? {
        if case let .bool(value) = self { return value }
        return nil
    }

    /// The number as an exact integer, when it is one (`3`, `3.0`), else `nil`.
    public var intValue: Int? {
        if case let .number(value) = self { return value.intValue }
        return nil
    }

    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? {
        if case let .number(value) = self { return value.doubleValue }
        return nil
    }

    /// The object, when this is one.
    public var objectValue: JSONObject? {
        if case let .object(value) = self { return value }
        return nil
    }

    /// The array, when this is one.
    public var arrayValue: [JSONValue]? {
        if case let .array(value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member `key` of an object, or `nil` for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// A short name of the kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    /// A floating-point number.
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object in literal order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of the value.
    public var description: String {
        String(decoding: WireJSON.serialize(self, style: .compact), as: UTF8.self)
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value. Through `WireJSON` the value comes back exactly as parsed
    /// (key order, number text); through other decoders objects take the order of `allKeys` and
    /// numbers the text of the closest `Int` or `Double`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the decoder holds nothing JSON can express.
    public init(from decoder: any Decoder) throws {
        if let wire = decoder as? WireValueDecoder {
            self = wire.value
            return
        }
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                self = .null
                return
            }
            if let value = try? single.decode(Bool.self) {
                self = .bool(value)
                return
            }
            if let value = try? single.decode(Int.self) {
                self = .number(JSONNumber(value))
                return
            }
            if let value = try? single.decode(Double.self) {
                self = .number(JSONNumber(value))
                return
            }
            if let value = try? single.decode(String.self) {
                self = .string(value)
                return
            }
        }
        if var array = try? decoder.unkeyedContainer() {
            var elements = [JSONValue]()
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyCodingKey.self) {
            var members = JSONObject()
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
            return
        }
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a JSON value"))
    }

    /// Encodes the value; `WireJSON` stores it unchanged.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        if let wire = encoder as? WireValueEncoder {
            wire.store(self)
            return
        }
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case let .bool(value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case let .number(value):
            var single = encoder.singleValueContainer()
            if let int = value.intValue, value.isInteger {
                try single.encode(int)
            } else {
                try single.encode(value.doubleValue)
            }
        case let .string(value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case let .array(elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case let .object(members):
            try members.encode(to: encoder)
        }
    }
}
