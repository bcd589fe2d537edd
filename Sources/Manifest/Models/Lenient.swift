import OrderedJSON

/// Tolerant reading helpers: a value of the wrong type is treated as absent instead of failing
/// the whole document (the station never sends one, but a listing must survive one bad field).
extension KeyedDecodingContainer {
    /// The value for `key`, or `nil` when it is missing, `null` or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }

    // Concrete overloads for the common field types: the generic `decodeIfPresent` reaches the
    // wire decoder through `T(from:)` and runtime type lookups, which dominated reading a listing.

    /// The string for `key`, or `nil` when it is missing, `null` or not a string.
    func lenient(_ type: String.Type, _ key: Key) -> String? { (try? decodeIfPresent(type, forKey: key)) ?? nil }

    /// The integer for `key`, or `nil` when it is missing, `null` or not an integer.
    func lenient(_ type: Int.Type, _ key: Key) -> Int? { (try? decodeIfPresent(type, forKey: key)) ?? nil }

    /// The Boolean for `key`, or `nil` when it is missing, `null` or not a Boolean.
    func lenient(_ type: Bool.Type, _ key: Key) -> Bool? { (try? decodeIfPresent(type, forKey: key)) ?? nil }
}


extension KeyedDecodingContainer {
    /// The strings of an array for `key`, skipping elements that are not strings; `nil` when the
    /// key is missing, `null` or not an array.
    func lenientStrings(_ key: Key) -> [String]? {
        lenient([JSONValue].self, key).map { $0.compactMap(\.stringValue) }
    }
}
