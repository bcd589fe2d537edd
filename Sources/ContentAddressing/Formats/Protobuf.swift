/// The package's protobuf wire-format reader: `dag-pb` and UnixFS nodes, IPNS records.
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
