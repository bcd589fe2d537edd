/// A decoded `dag-pb` node holding UnixFS data: what the reader needs of it.
struct DAGNode {
    struct Link {
        var hash: [UInt8]
        var cumulativeSize: UInt64?
    }

    /// UnixFS `Data.Type` values.
    enum Kind: UInt64 {
        case raw = 0, directory = 1, file = 2, metadata = 3, symlink = 4, hamtShard = 5
    }

    var links: [Link] = []
    var kind: Kind = .raw
    var data: ArraySlice<UInt8> = []
    var fileSize: UInt64?
    var blockSizes: [UInt64] = []

    /// Parses a `dag-pb` block and its UnixFS `Data`. Unknown fields are skipped.
    init(block: [UInt8], cid: CID) throws(UnixFSError) {
        var reader = ProtobufReader(bytes: block[...])
        var unixFS: ArraySlice<UInt8>?
        do throws(ProtobufReader.Failure) {
            while let (field, wireType) = try reader.nextField() {
                switch (field, wireType) {
                case (1, 2): unixFS = try reader.lengthDelimited()
                case (2, 2): links.append(try Self.parseLink(try reader.lengthDelimited()))
                default: try reader.skip(wireType)
                }
            }
            guard let unixFS else { throw ProtobufReader.Failure("node has no UnixFS Data") }
            var inner = ProtobufReader(bytes: unixFS)
            var sawType = false
            while let (field, wireType) = try inner.nextField() {
                switch (field, wireType) {
                case (1, 0):
                    let raw = try inner.varint()
                    guard let kind = Kind(rawValue: raw) else { throw ProtobufReader.Failure("unknown UnixFS type \(raw)") }
                    self.kind = kind
                    sawType = true
                case (2, 2): data = try inner.lengthDelimited()
                case (3, 0): fileSize = try inner.varint()
                case (4, 0): blockSizes.append(try inner.varint())
                case (4, 2):
                    var packed = ProtobufReader(bytes: try inner.lengthDelimited())
                    while !packed.isAtEnd { blockSizes.append(try packed.varint()) }
                default: try inner.skip(wireType)
                }
            }
            guard sawType else { throw ProtobufReader.Failure("UnixFS Data has no Type") }
        } catch {
            throw .malformedNode(cid, reason: error.reason)
        }
    }

    private static func parseLink(_ bytes: ArraySlice<UInt8>) throws(ProtobufReader.Failure) -> Link {
        var reader = ProtobufReader(bytes: bytes)
        var link = Link(hash: [])
        var sawHash = false
        while let (field, wireType) = try reader.nextField() {
            switch (field, wireType) {
            case (1, 2):
                link.hash = Array(try reader.lengthDelimited())
                sawHash = true
            case (3, 0): link.cumulativeSize = try reader.varint()
            default: try reader.skip(wireType)
            }
        }
        guard sawHash else { throw ProtobufReader.Failure("link has no Hash") }
        return link
    }
}

/// Minimal protobuf wire-format reader for `dag-pb` and UnixFS messages.
struct ProtobufReader {
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var isAtEnd: Bool { index >= bytes.endIndex }

    mutating func varint() throws(Failure) -> UInt64 {
        do {
            return try Varint.read(bytes, at: &index, strict: false)
        } catch {
            throw Failure("bad varint")
        }
    }

    /// The next field number and wire type, or `nil` at the end.
    mutating func nextField() throws(Failure) -> (UInt64, UInt64)? {
        guard !isAtEnd else { return nil }
        let key = try varint()
        guard key >> 3 != 0 else { throw Failure("field number 0") }
        return (key >> 3, key & 7)
    }

    mutating func lengthDelimited() throws(Failure) -> ArraySlice<UInt8> {
        let length = try varint()
        guard length <= UInt64(bytes.endIndex - index) else { throw Failure("length runs past the end") }
        let slice = bytes[index..<index + Int(length)]
        index += Int(length)
        return slice
    }

    mutating func skip(_ wireType: UInt64) throws(Failure) {
        switch wireType {
        case 0: _ = try varint()
        case 1: try advance(8)
        case 2: _ = try lengthDelimited()
        case 5: try advance(4)
        default: throw Failure("unsupported wire type \(wireType)")
        }
    }

    private mutating func advance(_ count: Int) throws(Failure) {
        guard bytes.endIndex - index >= count else { throw Failure("field runs past the end") }
        index += count
    }
}
