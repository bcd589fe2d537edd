/// Unsigned LEB128 varints as multiformats and protobuf write them.
package enum Varint {
    /// Appends the varint encoding of `value`.
    package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// The number of bytes the varint of `value` takes.
    static func length(of value: UInt64) -> Int {
        var count = 1
        var rest = value >> 7
        while rest != 0 {
            count += 1
            rest >>= 7
        }
        return count
    }

    /// Reads a varint at `index` (advancing it). Multiformats varints are at most 9 bytes and
    /// minimal; `strict` enforces that (protobuf allows 10 bytes and padding).
    static func read(_ bytes: ArraySlice<UInt8>, at index: inout Int, strict: Bool = true) throws(CIDError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let limit = strict ? 9 : 10
        for count in 0..<limit {
            guard index < bytes.endIndex else { throw .truncated }
            let byte = bytes[index]
            index += 1
            if shift == 63, byte > 1 { throw .invalidVarint }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if strict, byte == 0, count > 0 { throw .invalidVarint }
                return value
            }
            shift += 7
        }
        throw .invalidVarint
    }
}
