/// The CBOR subset a record's `data` uses (definite lengths only, as DAG-CBOR requires).
enum CBOR {
    struct Reader {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        mutating func byte() throws(IPNSRecordError) -> UInt8 {
            guard index < bytes.count else { throw .malformed("data ends early") }
            defer { index += 1 }
            return bytes[index]
        }

        /// The major type and its argument (a count, a length or the value).
        mutating func head() throws(IPNSRecordError) -> (major: UInt8, argument: UInt64) {
            let initial = try byte()
            let major = initial >> 5, info = initial & 0x1F
            switch info {
            case 0..<24: return (major, UInt64(info))
            case 24...27:
                var value: UInt64 = 0
                for _ in 0..<(1 << (info - 24)) { value = value << 8 | UInt64(try byte()) }
                return (major, value)
            default: throw .malformed("indefinite or reserved CBOR lengths are not DAG-CBOR")
            }
        }

        mutating func take(_ count: UInt64) throws(IPNSRecordError) -> [UInt8] {
            guard count <= UInt64(bytes.count - index) else { throw .malformed("data ends early") }
            defer { index += Int(count) }
            return Array(bytes[index..<index + Int(count)])
        }

        mutating func byteString() throws(IPNSRecordError) -> [UInt8] {
            let (major, length) = try head()
            guard major == 2 else { throw .malformed("a bytes field is not a CBOR byte string") }
            return try take(length)
        }

        mutating func unsigned() throws(IPNSRecordError) -> UInt64 {
            let (major, value) = try head()
            guard major == 0 else { throw .malformed("a number field is not a CBOR unsigned integer") }
            return value
        }

        /// Skips one value of any kind (unknown keys may carry anything), nesting at most 16 deep.
        mutating func skip(depth: Int) throws(IPNSRecordError) {
            guard depth < 16 else { throw .malformed("data nests too deep") }
            let (major, argument) = try head()
            switch major {
            case 0, 1, 7: return
            case 2, 3: _ = try take(argument)
            case 4:
                guard argument <= UInt64(bytes.count - index) else { throw .malformed("data ends early") }
                for _ in 0..<argument { try skip(depth: depth + 1) }
            case 5:
                guard argument <= UInt64(bytes.count - index) else { throw .malformed("data ends early") }
                for _ in 0..<argument * 2 { try skip(depth: depth + 1) }
            default: try skip(depth: depth + 1) // a tag: skip its content
            }
        }
    }
}
