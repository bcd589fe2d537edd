#if canImport(CCurl)
/// ASCII case-insensitive matching of HTTP names and schemes, without a lowercased copy.
enum ASCII {
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }

    /// Whether `text` is `lowercase` (written in lowercase) apart from ASCII case.
    static func equalsIgnoringCase(_ text: some StringProtocol, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard text.utf8.count == expected.count else { return false }
        return zip(text.utf8, expected).allSatisfy { lowercased($0) == $1 }
    }

    /// Whether `bytes` start with `lowercase` (written in lowercase) apart from ASCII case.
    static func hasPrefixIgnoringCase(_ bytes: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard bytes.count >= expected.count else { return false }
        return zip(bytes, expected).allSatisfy { lowercased($0) == $1 }
    }

    /// `Content-Length` and `Transfer-Encoding`: framing the transport writes itself, never taken
    /// from a request's fields.
    static func isFramingField(_ name: String) -> Bool {
        equalsIgnoringCase(name, "content-length") || equalsIgnoringCase(name, "transfer-encoding")
    }
}
#endif
