/// The few steps of DER (X.690) needed to find a certificate's `SubjectPublicKeyInfo`.
///
/// Every read is bounds-checked: certificates come from the network, so malformed input returns
/// `nil` instead of trapping.
enum DERReader {
    /// One encoded element: where its header starts, where its content starts and ends.
    struct Element {
        let tag: UInt8
        let start: Int
        let contentStart: Int
        let end: Int
    }

    /// Reads the element that starts at `offset` and ends no later than `limit`.
    static func element(in der: [UInt8], at offset: Int, limit: Int) -> Element? {
        guard offset >= 0, limit <= der.count, offset + 2 <= limit else { return nil }
        let tag = der[offset]
        guard tag & 0x1F != 0x1F else { return nil }  // multi-byte tags do not occur in X.509
        let first = der[offset + 1]
        var position = offset + 2
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4, position + count <= limit else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(der[position])
                position += 1
            }
        }
        guard length <= limit - position else { return nil }
        return Element(tag: tag, start: offset, contentStart: position, end: position + length)
    }

    /// The byte range of the `SubjectPublicKeyInfo` element (header included) of a certificate:
    /// `Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
    /// signature, issuer, validity, subject, subjectPublicKeyInfo, … }, … }` (RFC 5280 §4.1).
    static func subjectPublicKeyInfo(inCertificate der: [UInt8]) -> Range<Int>? {
        let sequence: UInt8 = 0x30
        guard let certificate = element(in: der, at: 0, limit: der.count), certificate.tag == sequence,
              let tbs = element(in: der, at: certificate.contentStart, limit: certificate.end), tbs.tag == sequence,
              var field = element(in: der, at: tbs.contentStart, limit: tbs.end)
        else { return nil }
        if field.tag == 0xA0 {  // explicit version
            guard let next = element(in: der, at: field.end, limit: tbs.end) else { return nil }
            field = next
        }
        // serialNumber, signature, issuer, validity, subject: five elements before the key.
        for _ in 0..<5 {
            guard let next = element(in: der, at: field.end, limit: tbs.end) else { return nil }
            field = next
        }
        guard field.tag == sequence else { return nil }
        return field.start..<field.end
    }
}
