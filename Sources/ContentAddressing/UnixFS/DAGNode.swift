/// A decoded `dag-pb` node holding UnixFS data: what the reader needs of it.
package struct DAGNode {
    package struct Link {
        package var hash: [UInt8]
        var cumulativeSize: UInt64?
    }

    /// UnixFS `Data.Type` values.
    enum Kind: UInt64 {
        case raw = 0, directory = 1, file = 2, metadata = 3, symlink = 4, hamtShard = 5
    }

    package var links: [Link] = []
    var kind: Kind = .raw
    package var data: ArraySlice<UInt8> = []
    package var fileSize: UInt64?
    package var blockSizes: [UInt64] = []

    /// Parses a `dag-pb` block and its UnixFS `Data`. Unknown fields are skipped.
    package init(block: [UInt8], cid: CID) throws(UnixFSError) {
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
