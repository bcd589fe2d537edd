import Foundation
import ClassicalCrypto

/// A signed IPNS record (the protobuf `IpnsEntry` a gateway serves for
/// `/ipns/<name>?format=ipns-record`), read and verified as the IPNS record specification has it.
///
/// Only the V2 signature counts: Ed25519 over `"ipns-signature:"` followed by the DAG-CBOR `data`
/// field, checked against the key inlined in the name (an Ed25519 peer id). The record's fields
/// are read from `data`; any of the protobuf's own copies (`value`, `validity`, `sequence`, `ttl`,
/// `validityType`) that is present must equal it. The V1 signature is ignored, as modern Kubo
/// does: a record without a V2 signature is refused.
///
///     let record = try IPNSRecord.verified(bytes, name: try PeerID("k51…"), at: Date())
///     record.value      // "/ipfs/bafy…"
///     record.sequence   // refuse one lower than the last seen
public struct IPNSRecord: Sendable, Hashable {
    /// The largest record accepted (the specification's limit), in bytes.
    package static let maximumByteCount = 10 * 1024
    /// The media type of a record on a gateway (`Accept` header and answer `Content-Type`).
    package static let mediaType = "application/vnd.ipfs.ipns-record"

    /// The path the name points to (`/ipfs/<cid>`, `/ipns/<name>`), as the record carries it.
    public let value: String
    /// The publisher's counter: higher is newer.
    public let sequence: UInt64
    /// The end of the record's validity (its EOL), to the nanosecond the record names.
    public let validity: Date
    /// The record's validity text exactly as signed (RFC 3339).
    public let validityText: String
    /// How long a resolver may cache the record, in nanoseconds, when the record says.
    public let ttl: UInt64?

    /// Parses `bytes` as a record for `name`, checks its V2 signature against the Ed25519 key in
    /// the name, and checks that `now` is before its validity's end.
    ///
    /// - Parameters:
    ///   - bytes: the protobuf record, as a gateway serves it.
    ///   - name: the IPNS name (or peer id) the record was requested for; its key is the trust anchor.
    ///   - now: the time to judge validity at (inject one to check an old record).
    /// - Throws: ``IPNSRecordError``.
    package static func verified(_ bytes: some Collection<UInt8>, name: PeerID, at now: Date) throws(IPNSRecordError) -> IPNSRecord {
        let record = try signed(bytes, name: name)
        guard now < record.validity else { throw .expired(validity: record.validityText) }
        return record
    }

    /// As ``verified(_:name:at:)``, without the validity check: the record's signature and
    /// consistency only (for reporting what an expired record said).
    ///
    /// - Throws: ``IPNSRecordError``, never ``IPNSRecordError/expired(validity:)``.
    package static func signed(_ bytes: some Collection<UInt8>, name: PeerID) throws(IPNSRecordError) -> IPNSRecord {
        let bytes = [UInt8](bytes)
        guard bytes.count <= maximumByteCount else { throw .tooLarge(bytes.count) }
        guard let publicKey = name.ed25519PublicKey else { throw .unsupportedKey }
        let entry = try Entry(protobuf: bytes)
        guard let data = entry.data, !data.isEmpty, let signature = entry.signatureV2, !signature.isEmpty else {
            throw .missingSignatureV2
        }
        if let embedded = entry.publicKey, embedded != Self.libp2pPublicKey(publicKey) {
            throw .publicKeyMismatch
        }
        guard Ed25519.isValidSignature(signature, for: Self.signaturePrefix + data, publicKey: publicKey) else {
            throw .invalidSignature
        }
        let fields = try DataFields(cbor: data)
        // The protobuf's own copies, when present, must say what the signed data says.
        if let value = entry.value, value != fields.value { throw .fieldMismatch("Value") }
        if let validity = entry.validity, validity != fields.validity { throw .fieldMismatch("Validity") }
        if let sequence = entry.sequence, sequence != fields.sequence { throw .fieldMismatch("Sequence") }
        if let ttl = entry.ttl, let signedTTL = fields.ttl, ttl != signedTTL { throw .fieldMismatch("TTL") }
        if let type = entry.validityType, type != fields.validityType { throw .fieldMismatch("ValidityType") }
        guard fields.validityType == 0 else { throw .unsupportedValidityType(fields.validityType) }
        guard let valueText = String(bytes: fields.value, encoding: .utf8) else { throw .malformed("Value is not UTF-8") }
        guard let validityText = String(bytes: fields.validity, encoding: .utf8),
              let validity = RFC3339.date(validityText) else {
            throw .malformed("Validity is not an RFC 3339 time")
        }
        return IPNSRecord(value: valueText, sequence: fields.sequence, validity: validity, validityText: validityText,
                          ttl: fields.ttl)
    }

    /// The CID of an `/ipfs/<cid>` value (no further path), or `nil` for any other value.
    public var ipfsCID: CID? {
        guard value.hasPrefix("/ipfs/") else { return nil }
        let rest = value.dropFirst("/ipfs/".count)
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        return try? CID(rest)
    }

    /// Makes a V2-signed record (as Kubo publishes one, without the legacy V1 signature) of
    /// `value` with `sequence`, valid until `validity`, signed by `key` (whose peer id is the
    /// name): what an emulated station's node publishes.
    ///
    /// - Parameters:
    ///   - value: the path the record points to (`/ipfs/<cid>`).
    ///   - sequence: the record's sequence number (each publish raises it).
    ///   - validity: the end of the record's validity.
    ///   - ttl: the cache hint in nanoseconds (Kubo's default is one hour).
    ///   - key: the node's Ed25519 key, whose peer id is the name.
    package static func make(value: String, sequence: UInt64, validity: Date, ttl: UInt64 = 3_600_000_000_000,
                            signingKey key: Ed25519.PrivateKey) -> [UInt8] {
        let validityText = RFC3339.string(validity)
        let data = dataCBOR(value: Array(value.utf8), validity: Array(validityText.utf8), sequence: sequence, ttl: ttl)
        let signature = key.signature(for: signaturePrefix + data)
        var out: [UInt8] = []
        Protobuf.appendBytes(1, Array(value.utf8), to: &out)
        Protobuf.appendVarint(3, 0, to: &out)
        Protobuf.appendBytes(4, Array(validityText.utf8), to: &out)
        Protobuf.appendVarint(5, sequence, to: &out)
        Protobuf.appendVarint(6, ttl, to: &out)
        Protobuf.appendBytes(8, signature, to: &out)
        Protobuf.appendBytes(9, data, to: &out)
        return out
    }

    /// `"ipns-signature:"`, the V2 signature's domain prefix.
    static let signaturePrefix = Array("ipns-signature:".utf8)

    /// The libp2p protobuf `PublicKey { Type: Ed25519, Data: key }`.
    static func libp2pPublicKey(_ key: [UInt8]) -> [UInt8] { [0x08, 0x01, 0x12, 0x20] + key }

    /// The DAG-CBOR `data` map, keys in DAG-CBOR order (length first, then bytes).
    static func dataCBOR(value: [UInt8], validity: [UInt8], sequence: UInt64, ttl: UInt64) -> [UInt8] {
        var out: [UInt8] = [0xA5]
        CBOR.appendText("TTL", to: &out); CBOR.appendHead(0, ttl, to: &out)
        CBOR.appendText("Value", to: &out); CBOR.appendHead(2, UInt64(value.count), to: &out); out += value
        CBOR.appendText("Sequence", to: &out); CBOR.appendHead(0, sequence, to: &out)
        CBOR.appendText("Validity", to: &out); CBOR.appendHead(2, UInt64(validity.count), to: &out); out += validity
        CBOR.appendText("ValidityType", to: &out); CBOR.appendHead(0, 0, to: &out)
        return out
    }
}

/// Why an IPNS record was refused.
package enum IPNSRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Over ``IPNSRecord/maximumByteCount`` bytes (the count found).
    case tooLarge(Int)
    /// The name is not an Ed25519 peer id, so it carries no key to verify against.
    case unsupportedKey
    /// Not a protobuf `IpnsEntry`, or its `data` is not the expected DAG-CBOR map (what is wrong).
    case malformed(String)
    /// No V2 signature or no `data` (a V1-only record).
    case missingSignatureV2
    /// The record embeds a public key other than the name's.
    case publicKeyMismatch
    /// The V2 signature does not verify under the name's key.
    case invalidSignature
    /// A protobuf field differs from the signed `data` (the field's name).
    case fieldMismatch(String)
    /// A validity type other than 0 (EOL).
    case unsupportedValidityType(UInt64)
    /// The record's validity ended (its EOL text).
    case expired(validity: String)

    /// A one-line explanation.
    package var description: String {
        switch self {
        case let .tooLarge(count): "the IPNS record is \(count) bytes, over the 10 KiB limit"
        case .unsupportedKey: "the IPNS name does not inline an Ed25519 key"
        case let .malformed(why): "not an IPNS record: \(why)"
        case .missingSignatureV2: "the IPNS record has no V2 signature"
        case .publicKeyMismatch: "the IPNS record embeds another public key"
        case .invalidSignature: "the IPNS record's signature does not verify under the name's key"
        case let .fieldMismatch(field): "the IPNS record's \(field) differs from its signed data"
        case let .unsupportedValidityType(type): "unsupported IPNS validity type \(type)"
        case let .expired(validity): "the IPNS record expired at \(validity)"
        }
    }
}

// MARK: - Protobuf IpnsEntry

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
            var index = 0
            while index < bytes.count {
                let key = try Protobuf.varint(bytes, &index)
                let field = key >> 3
                switch key & 7 {
                case 0:
                    let number = try Protobuf.varint(bytes, &index)
                    switch field {
                    case 3: validityType = number
                    case 5: sequence = number
                    case 6: ttl = number
                    default: break
                    }
                case 2:
                    let length = try Protobuf.varint(bytes, &index)
                    guard length <= UInt64(bytes.count - index) else { throw .malformed("a field runs past the end") }
                    let slice = Array(bytes[index..<index + Int(length)])
                    index += Int(length)
                    switch field {
                    case 1: value = slice
                    case 2: signatureV1 = slice
                    case 4: validity = slice
                    case 7: publicKey = slice
                    case 8: signatureV2 = slice
                    case 9: data = slice
                    default: break
                    }
                case 1:
                    guard bytes.count - index >= 8 else { throw .malformed("a field runs past the end") }
                    index += 8
                case 5:
                    guard bytes.count - index >= 4 else { throw .malformed("a field runs past the end") }
                    index += 4
                default:
                    throw .malformed("unsupported protobuf wire type \(key & 7)")
                }
            }
        }
    }

    /// The fields of the signed DAG-CBOR `data` map.
    struct DataFields {
        var value: [UInt8]
        var validity: [UInt8]
        var validityType: UInt64
        var sequence: UInt64
        var ttl: UInt64?

        init(cbor bytes: [UInt8]) throws(IPNSRecordError) {
            var reader = CBOR.Reader(bytes: bytes)
            let (major, count) = try reader.head()
            guard major == 5 else { throw .malformed("data is not a CBOR map") }
            var value: [UInt8]?, validity: [UInt8]?, validityType: UInt64?, sequence: UInt64?, ttl: UInt64?
            var seen = Set<String>()
            for _ in 0..<count {
                let (keyMajor, keyLength) = try reader.head()
                guard keyMajor == 3 else { throw .malformed("data has a key that is not text") }
                guard let key = String(bytes: try reader.take(keyLength), encoding: .utf8) else {
                    throw .malformed("data has a key that is not UTF-8")
                }
                guard seen.insert(key).inserted else { throw .malformed("data repeats the key \(key)") }
                switch key {
                case "Value": value = try reader.byteString()
                case "Validity": validity = try reader.byteString()
                case "ValidityType": validityType = try reader.unsigned()
                case "Sequence": sequence = try reader.unsigned()
                case "TTL": ttl = try reader.unsigned()
                default: try reader.skip(depth: 0)
                }
            }
            guard reader.isAtEnd else { throw .malformed("bytes after the data map") }
            guard let value, let validity, let validityType, let sequence else {
                throw .malformed("data lacks Value, Validity, ValidityType or Sequence")
            }
            self.value = value
            self.validity = validity
            self.validityType = validityType
            self.sequence = sequence
            self.ttl = ttl
        }
    }
}

/// The protobuf wire format, as far as an `IpnsEntry` needs it.
enum Protobuf {
    static func varint(_ bytes: [UInt8], _ index: inout Int) throws(IPNSRecordError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < bytes.count else { throw .malformed("a varint runs past the end") }
            let byte = bytes[index]
            index += 1
            guard shift < 64 else { throw .malformed("a varint is too long") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    static func appendVarint(_ field: UInt64, _ value: UInt64, to out: inout [UInt8]) {
        appendVarint(field << 3, to: &out)
        appendVarint(value, to: &out)
    }

    static func appendBytes(_ field: UInt64, _ bytes: [UInt8], to out: inout [UInt8]) {
        appendVarint(field << 3 | 2, to: &out)
        appendVarint(UInt64(bytes.count), to: &out)
        out += bytes
    }
}

/// The CBOR subset a record's `data` uses (definite lengths only, as DAG-CBOR requires).
enum CBOR {
    static func appendHead(_ major: UInt8, _ value: UInt64, to out: inout [UInt8]) {
        let top = major << 5
        switch value {
        case 0..<24: out.append(top | UInt8(value))
        case 24..<0x100: out += [top | 24, UInt8(value)]
        case 0x100..<0x10000: out += [top | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
        case 0x10000..<0x1_0000_0000: out.append(top | 26); out += (0..<4).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) }
        default: out.append(top | 27); out += (0..<8).reversed().map { UInt8((value >> ($0 * 8)) & 0xFF) }
        }
    }

    static func appendText(_ text: String, to out: inout [UInt8]) {
        appendHead(3, UInt64(text.utf8.count), to: &out)
        out += Array(text.utf8)
    }

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

/// RFC 3339 times as IPNS records carry them (Go's `RFC3339Nano`: `2026-01-02T03:04:05.123456789Z`).
enum RFC3339 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `nil` for anything else.
    static func date(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var value = 0
            for i in at..<at + count {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 45, let month = digits(5, 2), b[7] == 45,
              let day = digits(8, 2), b[10] == 84 || b[10] == 116, let hour = digits(11, 2), b[13] == 58,
              let minute = digits(14, 2), b[16] == 58, let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < b.count, b[index] == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, (48...57).contains(b[index]) {
                fraction += Double(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offset = 0
        switch b[index] {
        case 90, 122:
            index += 1
        case 43, 45:
            guard let hours = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == 58,
                  let minutes = digits(index + 4, 2) else { return nil }
            offset = (hours * 60 + minutes) * 60 * (b[index] == 43 ? 1 : -1)
            index += 6
        default: return nil
        }
        guard index == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// The UTC form with nanoseconds, trailing zeros dropped (as Go's `RFC3339Nano` writes it).
    static func string(_ date: Date) -> String {
        let total = date.timeIntervalSince1970
        var seconds = Int(total.rounded(.down))
        var nanos = Int(((total - Double(seconds)) * 1e9).rounded())
        if nanos >= 1_000_000_000 { seconds += 1; nanos -= 1_000_000_000 }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var text = "\(String(repeating: "0", count: max(0, 4 - String(year).count)))\(year)-\(two(month))-\(two(day))T"
        text += "\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))"
        if nanos > 0 {
            var fraction = String(nanos)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
