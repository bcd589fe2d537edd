/// What building JSON values may allocate, charged by the parser as it builds them.
///
/// Counting a document's bytes does not bound what its tree takes: `[{"":0},…]` is 7 bytes an
/// element and a tree node, a map and its two arrays each. So every value built is charged a
/// fixed cost close to what it allocates (its slot in the parent, the storage of a container,
/// each member's key, the text of a long string or number), and the parse fails with
/// ``WireFormatError/memoryLimitExceeded(limit:)`` as soon as the next charge would pass
/// ``limit``. The charges never fall below what the tree allocates, so a parse within its budget
/// holds at most ``limit`` bytes of tree and at most ``maximumCostPerByte`` times the document's
/// size. One budget can be shared by several parses (every post's metadata of one listing).
package struct JSONMemoryBudget: Sendable {
    /// The most bytes the charged values may take together.
    let limit: Int
    /// What the values built so far were charged.
    package private(set) var used = 0

    /// A budget of `limit` bytes (at least 0).
    package init(limit: Int) { self.limit = max(0, limit) }

    /// No limit: for documents one trusts (the package's own output).
    package static var unlimited: JSONMemoryBudget { JSONMemoryBudget(limit: .max) }

    /// A value's slot in its parent array or object (or the document's root).
    static let valueCost = 32
    /// The storage of a non-empty array (header and allocator overhead), beside its elements' slots.
    static let arrayCost = 48
    /// The storage of a non-empty object: its key and value arrays (and, past a dozen members,
    /// its index), beside its values' slots.
    static let objectCost = 96
    /// One member of an object: its key's slot and its share of the index.
    static let memberCost = 40
    /// The most a document can be charged per byte: a nested array, `[` and `]`, is 2 bytes a
    /// level and costs its slot and its storage, 80 (a nested one-member object, `{"":` and `}`,
    /// costs 168 in 5 bytes; `[0,…]`, 32 in 2).
    static let maximumCostPerByte = 40

    /// The cost of a string or number whose text is `count` UTF-8 bytes, beside its slot: nothing
    /// when it fits inline (15 bytes), else its heap storage.
    @inline(__always)
    static func textCost(_ count: Int) -> Int { count > 15 ? 32 + count : 0 }

    /// Charges `cost` bytes.
    ///
    /// - Throws: ``WireFormatError/memoryLimitExceeded(limit:)`` when the charge would pass ``limit``.
    @inline(__always)
    package mutating func charge(_ cost: Int) throws(WireFormatError) {
        guard cost <= limit - used else { throw .memoryLimitExceeded(limit: limit) }
        used += cost
    }
}
