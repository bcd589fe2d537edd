#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One node of the tree an `Encodable` builds; containers are classes so that nested containers
/// can keep writing into them.
final class EncodingNode {
    final class ObjectStorage {
        var members = OrderedMap<EncodingNode>()
    }

    final class ArrayStorage {
        var elements = [EncodingNode]()
    }

    enum Content {
        case empty
        case value(JSONValue)
        case object(ObjectStorage)
        case array(ArrayStorage)
    }

    var content = Content.empty

    /// The node's object storage, replacing any other content (a keyed container asked twice
    /// shares the first one's storage, as `JSONEncoder` does).
    func objectStorage() -> ObjectStorage {
        if case let .object(storage) = content { return storage }
        let storage = ObjectStorage()
        content = .object(storage)
        return storage
    }

    func arrayStorage() -> ArrayStorage {
        if case let .array(storage) = content { return storage }
        let storage = ArrayStorage()
        content = .array(storage)
        return storage
    }

    /// The finished value; a node nothing was written to becomes an empty object.
    func materialize() -> JSONValue {
        switch content {
        case .empty: return .object(JSONObject())
        case let .value(value): return value
        case let .object(storage): return .object(storage.members.mapValues { $0.materialize() })
        case let .array(storage): return .array(storage.elements.map { $0.materialize() })
        }
    }
}

/// An `Encoder` that builds a ``JSONValue`` with object members in the order they were encoded
/// (re-encoding a key replaces its value in place, like assigning to a Python `dict`).
struct WireValueEncoder: Encoder, SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    let dates: WireJSON.DateEncoding
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func store(_ value: JSONValue) { node.content = .value(value) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(WireKeyedEncodingContainer<Key>(storage: node.objectStorage(), codingPath: codingPath, dates: dates))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        WireUnkeyedEncodingContainer(storage: node.arrayStorage(), codingPath: codingPath, dates: dates)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { store(.null) }
    func encode(_ value: Bool) throws { store(.bool(value)) }
    func encode(_ value: String) throws { store(.string(value)) }
    func encode(_ value: Double) throws { store(.number(JSONNumber(value))) }
    func encode(_ value: Float) throws { store(.number(JSONNumber(Double(value)))) }
    func encode(_ value: Int) throws { store(.number(JSONNumber(value))) }
    func encode(_ value: Int8) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: Int16) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: Int32) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: Int64) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: UInt) throws { store(.number(JSONNumber(UInt64(value)))) }
    func encode(_ value: UInt8) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: UInt16) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: UInt32) throws { store(.number(JSONNumber(Int(value)))) }
    func encode(_ value: UInt64) throws { store(.number(JSONNumber(value))) }

    func encode<T: Encodable>(_ value: T) throws {
        if let json = value as? JSONValue {
            store(json)
            return
        }
        if let date = value as? Date {
            store(try dates.value(of: date))
            return
        }
        try value.encode(to: self)
    }
}

struct WireKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: EncodingNode.ObjectStorage
    let codingPath: [any CodingKey]
    let dates: WireJSON.DateEncoding

    private func child(_ key: Key) -> WireValueEncoder {
        let node = EncodingNode()
        storage.members[key.stringValue] = node
        return WireValueEncoder(node: node, codingPath: codingPath + [key], dates: dates)
    }

    mutating func encodeNil(forKey key: Key) throws { try child(key).encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let node = EncodingNode()
        storage.members["super"] = node
        return WireValueEncoder(node: node, codingPath: codingPath + [AnyCodingKey("super")], dates: dates)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

struct WireUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let storage: EncodingNode.ArrayStorage
    let codingPath: [any CodingKey]
    let dates: WireJSON.DateEncoding

    var count: Int { storage.elements.count }

    private func next() -> WireValueEncoder {
        let node = EncodingNode()
        let key = AnyCodingKey(intValue: storage.elements.count) ?? AnyCodingKey("\(storage.elements.count)")
        storage.elements.append(node)
        return WireValueEncoder(node: node, codingPath: codingPath + [key], dates: dates)
    }

    mutating func encodeNil() throws { try next().encodeNil() }
    mutating func encode(_ value: Bool) throws { try next().encode(value) }
    mutating func encode(_ value: String) throws { try next().encode(value) }
    mutating func encode(_ value: Double) throws { try next().encode(value) }
    mutating func encode(_ value: Float) throws { try next().encode(value) }
    mutating func encode(_ value: Int) throws { try next().encode(value) }
    mutating func encode(_ value: Int8) throws { try next().encode(value) }
    mutating func encode(_ value: Int16) throws { try next().encode(value) }
    mutating func encode(_ value: Int32) throws { try next().encode(value) }
    mutating func encode(_ value: Int64) throws { try next().encode(value) }
    mutating func encode(_ value: UInt) throws { try next().encode(value) }
    mutating func encode(_ value: UInt8) throws { try next().encode(value) }
    mutating func encode(_ value: UInt16) throws { try next().encode(value) }
    mutating func encode(_ value: UInt32) throws { try next().encode(value) }
    mutating func encode(_ value: UInt64) throws { try next().encode(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encode(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }

    mutating func superEncoder() -> any Encoder { next() }
}
