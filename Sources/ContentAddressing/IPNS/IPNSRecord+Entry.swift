extension IPNSRecord {
    /// The protobuf fields the record may carry (unknown fields are skipped).
    struct Entry {
        var value: [UInt8]?
        var signatureV1: [UInt8]?
        var validityType: UInt64?
        var validity: [UInt8]?
        var sequence: UInt64?
        var ttl: UInt64?
        var publicKey: [UInt8]?
        var signatureV2: [UInt8]?
        var data: [UInt8]?

        init(protobuf bytes: [UInt8]) throws(IPNSRecordError) {
            var reader = ProtobufReader(bytes: bytes[...])
            do throws(ProtobufReader.Failure) {
                while let (field, wireType) = try reader.nextField() {
                    switch (field, wireType) {
                    case (3, 0): validityType = try reader.varint()
                    case (5, 0): sequence = try reader.varint()
                    case (6, 0): ttl = try reader.varint()
                    case (1, 2): value = Array(try reader.lengthDelimited())
                    case (2, 2): signatureV1 = Array(try reader.lengthDelimited())
                    case (4, 2): validity = Array(try reader.lengthDelimited())
                    case (7, 2): publicKey = Array(try reader.lengthDelimited())
                    case (8, 2): signatureV2 = Array(try reader.lengthDelimited())
                    case (9, 2): data = Array(try reader.lengthDelimited())
                    default: try reader.skip(wireType)
                    }
                }
            } catch {
                throw .malformed(error.reason)
            }
        }
    }
}
