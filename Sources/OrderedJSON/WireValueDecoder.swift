#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `Decoder` over a parsed ``JSONValue``: objects list their keys in document order, so
/// `allKeys` (and ``OrderedMap``) see the station's order.
struct WireValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: JSONValue
    private let parentPath: [any CodingKey]
    private let key: (any CodingKey)?
    let dates: WireJSON.DateDecoding
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Built when asked for (errors, nested containers): a member read through a keyed container
    /// then costs no array.
    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }

    init(value: JSONValue, codingPath: [any CodingKey], dates: WireJSON.DateDecoding) {
        self.value = value
        parentPath = codingPath
        key = nil
        self.dates = dates
    }

    /// The decoder of the member `key` of a container at `parentPath`.
    init(value: JSONValue, parentPath: [any CodingKey], key: any CodingKey, dates: WireJSON.DateDecoding) {
        self.value = value
        self.parentPath = parentPath
        self.key = key
        self.dates = dates
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case let .object(object) = value else { throw mismatch(JSONObject.self) }
        return KeyedDecodingContainer(WireKeyedDecodingContainer<Key>(object: object, codingPath: codingPath, dates: dates))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case let .array(elements) = value else { throw mismatch([JSONValue].self) }
        return WireUnkeyedDecodingContainer(elements: elements, codingPath: codingPath, dates: dates)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool { value.isNull }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case let .bool(flag) = value else { throw mismatch(Bool.self) }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case let .string(text) = value else { throw mismatch(String.self) }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint() }
    func decode(_ type: Float.Type) throws -> Float { Float(try floatingPoint() as Double) }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self, let same = value as? T { return same }
        if T.self == Date.self, let date = try decodeDate() as? T { return date }
        return try T(from: self)
    }

    // MARK: Helpers

    /// A `Date` read with ``dates``: by default integer or fractional Unix seconds, or an
    /// ISO-8601 string.
    private func decodeDate() throws -> Date {
        switch dates {
        case .custom(let read):
            return try read(value)
        case .flexible:
            switch value {
            case .number(let number):
                let seconds = number.doubleValue
                guard seconds.isFinite else {
                    throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(number.text) is not a time"))
                }
                return Date(timeIntervalSince1970: seconds)
            case .string(let text):
                guard let date = WireJSON.DateDecoding.iso8601Date(text) else {
                    throw DecodingError.dataCorrupted(.init(
                        codingPath: codingPath, debugDescription: "\(String(reflecting: text)) is not an ISO-8601 date"))
                }
                return date
            default:
                throw mismatch(Date.self)
            }
        }
    }

    private func mismatch(_ type: Any.Type) -> DecodingError {
        if value.isNull {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "found null"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "found \(value.kindName)"))
    }

    private func integer<T: FixedWidthInteger>() throws -> T {
        guard case let .number(number) = value else { throw mismatch(T.self) }
        if number.isInteger, let exact = T(number.text) { return exact }
        if number.text == "-0" { return 0 }
        let double = number.doubleValue
        if double.isFinite, double.rounded(.towardZero) == double, let exact = T(exactly: double) { return exact }
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath, debugDescription: "\(number.text) is not an integer that fits \(T.self)"))
    }

    private func floatingPoint() throws -> Double {
        guard case let .number(number) = value else { throw mismatch(Double.self) }
        return number.doubleValue
    }
}

/// Keyed access to an object; keys in document order.
struct WireKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]
    let dates: WireJSON.DateDecoding

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object.contains(key: key.stringValue) }

    private func decoder(for key: Key) throws -> WireValueDecoder {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
        }
        return WireValueDecoder(value: value, parentPath: codingPath, key: key, dates: dates)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder(for: key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(for: key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(for: key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(for: key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(for: key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(for: key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(for: key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(for: key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(for: key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(for: key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(for: key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(for: key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(for: key).decode(type) }

    // `decodeIfPresent` with one lookup (the protocol's default looks the key up three times).
    // Same results: a missing key or `null` is `nil`, anything else decodes or throws.
    private func presentDecoder(for key: Key) -> WireValueDecoder? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return WireValueDecoder(value: value, parentPath: codingPath, key: key, dates: dates)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try presentDecoder(for: key)?.decode(type) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try presentDecoder(for: key)?.decode(type) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try presentDecoder(for: key)?.decode(type) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try presentDecoder(for: key)?.decode(type) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try presentDecoder(for: key)?.decode(type) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try presentDecoder(for: key)?.decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        WireValueDecoder(value: object["super"] ?? .null, codingPath: codingPath + [AnyCodingKey("super")], dates: dates)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        WireValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key], dates: dates)
    }
}

/// Sequential access to an array.
struct WireUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let dates: WireJSON.DateDecoding
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], dates: WireJSON.DateDecoding) {
        self.elements = elements
        self.codingPath = codingPath
        self.dates = dates
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next(_ type: Any.Type) throws -> WireValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(
                codingPath: codingPath + [AnyCodingKey(intValue: currentIndex) ?? AnyCodingKey("\(currentIndex)")],
                debugDescription: "the array has no more elements"))
        }
        let decoder = WireValueDecoder(
            value: elements[currentIndex],
            codingPath: codingPath + [AnyCodingKey(intValue: currentIndex) ?? AnyCodingKey("\(currentIndex)")], dates: dates)
        currentIndex += 1
        return decoder
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next(JSONObject.self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([JSONValue].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next(JSONValue.self) }
}
