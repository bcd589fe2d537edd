/// A string-keyed map that remembers the order its keys were first inserted, the way a Python
/// `dict` does.
///
/// The station writes its manifest, envelope sets and profile with Python's `json.dumps`, which
/// keeps insertion order. Keeping that order is what lets `WireJSON` write the same bytes back
/// (and so the same CID). Setting an existing key replaces its value in place; a new key goes to
/// the end; removing a key closes the gap.
///
/// Equality compares keys, values *and order*: two maps with the same entries in another order
/// serialize to different bytes, so they are different here.
///
/// Decoding keeps the document's key order when the decoder reports keys in order
/// (`WireJSON` does; Foundation's `JSONDecoder` makes no promise).
public struct OrderedMap<Value> {
    /// One key and its value.
    public typealias Element = (key: String, value: Value)

    private var storedKeys: [String] = []
    private var storedValues: [Value] = []
    /// Positions by key, built only once the map outgrows a linear scan (most wire objects have a
    /// handful of members, and a hash table per object dominated parsing them).
    private var positions: [String: Int]?
    private static var indexThreshold: Int { 12 }

    /// Creates an empty map.
    public init() {}

    /// Creates a map from key-value pairs in order; a repeated key keeps its first position and
    /// takes its last value (Python's rule for duplicate JSON keys).
    public init(_ pairs: some Sequence<(String, Value)>) {
        for (key, value) in pairs { self[key] = value }
    }

    /// The keys, in insertion order.
    public var keys: [String] { storedKeys }

    /// The values, in key order.
    public var values: [Value] { storedValues }

    /// The number of entries.
    public var count: Int { storedKeys.count }

    /// Whether the map has no entries.
    public var isEmpty: Bool { storedKeys.isEmpty }

    /// Reads, replaces (in place), appends (new key) or removes (`nil`) the value for `key`.
    public subscript(key: String) -> Value? {
        get { index(forKey: key).map { storedValues[$0] } }
        set {
            if let newValue {
                if let position = index(forKey: key) {
                    storedValues[position] = newValue
                } else {
                    if positions != nil {
                        positions?[key] = storedKeys.count
                    } else if storedKeys.count + 1 > Self.indexThreshold {
                        var built = [String: Int](minimumCapacity: storedKeys.count * 2)
                        for (position, existing) in storedKeys.enumerated() { built[existing] = position }
                        built[key] = storedKeys.count
                        positions = built
                    }
                    storedKeys.append(key)
                    storedValues.append(newValue)
                }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Creates a map of `keys` and `values` in order, with room for exactly that many entries (a
    /// reader that knows an object's size allocates what it holds, never more); a repeated key
    /// keeps its first position and takes its last value.
    init(keys: some Collection<String>, values: some Collection<Value>) {
        storedKeys.reserveCapacity(keys.count)
        storedValues.reserveCapacity(keys.count)
        for (key, value) in zip(keys, values) { self[key] = value }
    }

    /// Changes the value for `key` in place, first appending `defaultValue()` when the key is
    /// absent, and returns what `update` returns. Unlike reading the value, changing it and
    /// setting it back, this does not copy the value (a namespace's posts, say) on every change.
    public mutating func updateValue<Result>(
        forKey key: String, default defaultValue: @autoclosure () -> Value, _ update: (inout Value) throws -> Result
    ) rethrows -> Result {
        if index(forKey: key) == nil { self[key] = defaultValue() }
        let position = index(forKey: key) ?? storedValues.count - 1
        return try update(&storedValues[position])
    }

    /// Whether `key` is present.
    public func contains(key: String) -> Bool { index(forKey: key) != nil }

    /// The position of `key` in the order, or `nil`.
    public func index(forKey key: String) -> Int? {
        if let positions { return positions[key] }
        // The byte count first (constant time): most keys of an object differ in length, and a
        // full comparison costs tens of instructions even for two short ASCII keys.
        let length = key.utf8.count
        return storedKeys.firstIndex { $0.utf8.count == length && $0 == key }
    }

    /// Removes `key` and returns its value, or `nil` when it was absent.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> Value? {
        guard let position = index(forKey: key) else { return nil }
        storedKeys.remove(at: position)
        let value = storedValues.remove(at: position)
        if positions != nil {
            positions?[key] = nil
            for index in position..<storedKeys.count { positions?[storedKeys[index]] = index }
        }
        return value
    }

    /// Returns a map with the same keys, in the same order, and transformed values.
    public func mapValues<T>(_ transform: (Value) throws -> T) rethrows -> OrderedMap<T> {
        var result = OrderedMap<T>()
        result.storedKeys = storedKeys
        result.storedValues = try storedValues.map(transform)
        result.positions = positions
        return result
    }
}

extension OrderedMap: Sequence {
    /// Iterates the entries in order.
    public struct Iterator: IteratorProtocol {
        private var keys: IndexingIterator<[String]>
        private var values: IndexingIterator<[Value]>

        init(keys: [String], values: [Value]) {
            self.keys = keys.makeIterator()
            self.values = values.makeIterator()
        }

        /// The next entry, or `nil` at the end.
        public mutating func next() -> Element? {
            guard let key = keys.next(), let value = values.next() else { return nil }
            return (key, value)
        }
    }

    /// Returns an iterator over the entries in order.
    public func makeIterator() -> Iterator { Iterator(keys: storedKeys, values: storedValues) }

    /// The number of entries (lets `Array(map)` reserve once).
    public var underestimatedCount: Int { storedKeys.count }
}

extension OrderedMap: ExpressibleByDictionaryLiteral {
    /// Creates a map from a literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(elements)
    }
}

extension OrderedMap: Sendable where Value: Sendable {}

extension OrderedMap: Equatable where Value: Equatable {
    /// Equal when both have the same keys in the same order with equal values.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.storedKeys == rhs.storedKeys && lhs.storedValues == rhs.storedValues
    }
}

extension OrderedMap: Hashable where Value: Hashable {
    /// Hashes keys and values in order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storedKeys)
        hasher.combine(storedValues)
    }
}

extension OrderedMap: CustomStringConvertible {
    /// The entries in order, for debugging.
    public var description: String {
        "[" + zip(storedKeys, storedValues).map { "\"\($0)\": \($1)" }.joined(separator: ", ") + "]"
    }
}

extension OrderedMap: Decodable where Value: Decodable {
    /// Decodes a JSON object, in the order the decoder lists its keys.
    ///
    /// - Throws: `DecodingError` when the value is not an object or a value does not decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        self.init()
        for key in container.allKeys {
            self[key.stringValue] = try container.decode(Value.self, forKey: key)
        }
    }
}

extension OrderedMap: Encodable where Value: Encodable {
    /// Encodes a JSON object with the keys in order.
    ///
    /// - Throws: whatever encoding a value throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        for (key, value) in zip(storedKeys, storedValues) {
            try container.encode(value, forKey: AnyCodingKey(key))
        }
    }
}

/// A coding key for any string: used to walk objects whose keys are data (client names, uids).
struct AnyCodingKey: CodingKey, Hashable, Sendable {
    /// The key text.
    let stringValue: String
    /// The array index when the key stands for one.
    let intValue: Int?

    /// Creates a key for `string`.
    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    /// Creates a key for `stringValue`; never fails.
    init?(stringValue: String) { self.init(stringValue) }

    /// Creates a key for an array index.
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
