/// An ordered list of HTTP header fields.
///
/// Reads are case-insensitive (`headers["content-type"]` finds `Content-Type`), as HTTP requires;
/// writes keep the order and the original spelling of every name, so a request goes out exactly as
/// it was built. A name may appear several times (`add(_:value:)`); the subscript reads the first
/// value and `values(for:)` reads all of them.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field: a name as spelled by whoever created it, and its value.
    public struct Field: Sendable, Hashable {
        /// The field name, in its original case.
        public var name: String
        /// The field value, without surrounding whitespace.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Every field, in order.
    public private(set) var fields: [Field]

    /// An empty header list.
    public init() { fields = [] }

    /// A header list holding `fields` in order.
    public init(_ fields: [Field]) { self.fields = fields }

    /// A header list holding `pairs` in order, for example `HTTPHeaders([("Accept", "*/*")])`.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// A header list from a literal such as `["Content-Type": "application/json"]`, in source order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields (repeated names count once per field).
    public var count: Int { fields.count }

    /// Whether the list has no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value whose name matches `name` case-insensitively, or `nil`.
    ///
    /// Setting a value replaces the first matching field in place (keeping its position and
    /// spelling) and removes any later ones; setting `nil` removes every matching field.
    public subscript(name: String) -> String? {
        get { fields.first { Self.namesMatch($0.name, name) }?.value }
        set {
            guard let newValue else {
                remove(name)
                return
            }
            if let index = fields.firstIndex(where: { Self.namesMatch($0.name, name) }) {
                fields[index].value = newValue
                var position = fields.index(after: index)
                while position < fields.endIndex {
                    if Self.namesMatch(fields[position].name, name) {
                        fields.remove(at: position)
                    } else {
                        position = fields.index(after: position)
                    }
                }
            } else {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// Every value whose name matches `name` case-insensitively, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Whether some field's name matches `name` case-insensitively.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesMatch($0.name, name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(_ name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field whose name matches `name` case-insensitively.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The fields as `Name: value` lines.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// ASCII case-insensitive comparison: header names are ASCII tokens, so no Unicode folding.
    static func namesMatch(_ a: String, _ b: String) -> Bool {
        let left = a.utf8, right = b.utf8
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
