import Foundation
@testable import ContentAddressing
import OrderedJSON
import Testing

/// A record from `Resources/gateway-conformance` (ipfs/gateway-conformance's Kubo- and
/// boxo-made fixtures, see its COMMIT and LICENSE files), with the name from its file name.
private func fixture(_ path: String) throws -> (bytes: [UInt8], name: PeerID) {
    let bytes = [UInt8](try resourceData("gateway-conformance/" + path))
    let file = path.split(separator: "/").last.map(String.init) ?? path
    let stem = file.replacingOccurrences(of: ".ipns-record", with: "")
    let name = String(stem.split(separator: "_").first ?? Substring(stem))
    return (bytes, try PeerID(name))
}

/// A time before every fixture's validity ends (they were made valid for 100 years).
private let now = Date(timeIntervalSince1970: 1_800_000_000) // 2027-01-15
/// A time after every fixture's validity has ended.
private let after = Date(timeIntervalSince1970: 5_000_000_000) // 2128-06-11

@Suite("IPNS records: Kubo's own, verified and refused")
struct IPNSRecordTests {
    struct Valid: Sendable, CustomTestStringConvertible {
        let path: String
        let value: String
        let sequence: UInt64
        let validity: String
        var testDescription: String { path.split(separator: "/").last.map(String.init) ?? path }
    }

    /// Records as `ipfs name publish` (Kubo) and boxo's `ipns.NewRecord` write them, with the
    /// values gateway-conformance's README, tests and generator give.
    static let valid: [Valid] = [
        // tooling/ipns/ipns_test.go: `ipfs name publish --allow-offline -t 876000h --key=self …`
        Valid(path: "tooling/ipns/_fixtures/k51qzi5uqu5dgh7y9l90nqs6tvnzcm9erbt8fhzg3fu79p5qt9zb2izvfu51ki.ipns-record",
              value: "/ipfs/bafyaaeykceeaeeqlnbswy3dpo5xxe3debimaw", sequence: 1, validity: "2123-03-17T12:44:50.801257Z"),
        Valid(path: "tooling/ipns/_fixtures/k51qzi5uqu5dh71qgwangrt6r0nd4094i88nsady6qgd1dhjcyfsaqmpp143ab.ipns-record",
              value: "/ipfs/bafkreidfdrlkeq4m4xnxuyx6iae76fdm4wgl5d4xzsb77ixhyqwumhz244", sequence: 0,
              validity: "2123-04-12T13:36:58.23727Z"),
        Valid(path: "tooling/ipns/_fixtures/12D3KooWLQzUv2FHWGVPXTXSZpdHs7oHbXub2G5WC8Tx4NQhyd2d.ipns-record",
              value: "/ipfs/bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am", sequence: 0,
              validity: "2123-04-12T13:44:59.801728Z"),
        // fixtures/ipns_records/README.md: generator/main.go's working records.
        Valid(path: "fixtures/ipns_records/k51qzi5uqu5dlkw8pxuw9qmqayfdeh4kfebhmreauqdc6a7c3y7d5i9fi8mk9w_v1-v2.ipns-record",
              value: "/ipfs/bafkqaddwgevxmmraojswg33smq", sequence: 0, validity: "2123-08-14T12:17:03.694052Z"),
        Valid(path: "fixtures/ipns_records/k51qzi5uqu5dit2ku9mutlfgwyz8u730on38kd10m97m36bjt66my99hb6103f_v2.ipns-record",
              value: "/ipfs/bafkqadtwgiww63tmpeqhezldn5zgi", sequence: 0, validity: "2123-08-14T12:17:03.694052Z"),
        // A broken V1 signature does not matter: only V2 counts.
        Valid(path: "fixtures/ipns_records/k51qzi5uqu5dilgf7gorsh9vcqqq4myo6jd4zmqkuy9pxyxi5fua3uf7axph4y_v1-v2-broken-signature-v1.ipns-record",
              value: "/ipfs/bafkqahtwgevxmmrao5uxi2bamjzg623fnyqhg2lhnzqxi5lsmuqhmmi", sequence: 0,
              validity: "2123-08-14T12:17:03.694052Z"),
        Valid(path: "fixtures/gateway-cache/k51qzi5uqu5dlxdsdu5fpuu7h69wu4ohp32iwm9pdt9nq3y5rpn3ln9j12zfhe.ipns-record",
              value: "/ipfs/bafybeib3ffl2teiqdncv3mkz4r23b5ctrwkzrrhctdbne6iboayxuxk5ui", sequence: 0,
              validity: "2123-04-12T15:32:22.646144Z"),
        Valid(path: "fixtures/gateway-cache/k51qzi5uqu5djokp3m1keo36hoxtd6u3a1d2rg1camf6al7p3huy63dojlm57c.ipns-record",
              value: "/ipfs/bafybeib3ffl2teiqdncv3mkz4r23b5ctrwkzrrhctdbne6iboayxuxk5ui/root2", sequence: 0,
              validity: "2126-01-31T15:56:12.714899293Z"),
        Valid(path: "fixtures/path_gateway_dag/k51qzi5uqu5dghjous0agrwavl8vzl64xckoqzwqeqwudfr74kfd11zcyk3b7l.ipns-record",
              value: "/ipfs/bafyreibs4utpgbn7uqegmd2goqz4bkyflre2ek2iwv743fhvylwi4zeeim", sequence: 0,
              validity: "2123-04-13T08:09:51.891396Z"),
    ]

    @Test("A Kubo-made record verifies against its name, with the value, sequence and validity it was made with",
          arguments: valid)
    func kuboRecordVerifies(_ item: Valid) throws {
        let (bytes, name) = try fixture(item.path)
        let record = try IPNSRecord.verified(bytes, name: name, at: now)
        #expect(record.value == item.value)
        #expect(record.sequence == item.sequence)
        #expect(record.validityText == item.validity)
        #expect(RFC3339.string(record.validity).hasPrefix(String(item.validity.prefix(19))))
    }

    @Test("Past its validity (an injected clock) a Kubo-made record is refused as expired", arguments: valid)
    func kuboRecordExpires(_ item: Valid) throws {
        let (bytes, name) = try fixture(item.path)
        #expect(throws: IPNSRecordError.expired(validity: item.validity)) {
            try IPNSRecord.verified(bytes, name: name, at: after)
        }
        // One second before its end it is still valid, one second after it is not.
        let end = try IPNSRecord.signed(bytes, name: name).validity
        #expect(throws: Never.self) { try IPNSRecord.verified(bytes, name: name, at: end.addingTimeInterval(-1)) }
        #expect(throws: IPNSRecordError.self) { try IPNSRecord.verified(bytes, name: name, at: end.addingTimeInterval(1)) }
    }

    @Test("The broken records of gateway-conformance are refused for what is broken")
    func brokenRecordsRefused() throws {
        let v1Only = try fixture("fixtures/ipns_records/k51qzi5uqu5dm4tm0wt8srkg9h9suud4wuiwjimndrkydqm81cqtlb5ak6p7ku_v1.ipns-record")
        #expect(throws: IPNSRecordError.missingSignatureV2) { try IPNSRecord.verified(v1Only.bytes, name: v1Only.name, at: now) }
        let badV2 = try fixture(
            "fixtures/ipns_records/k51qzi5uqu5diamp7qnnvs1p1gzmku3eijkeijs3418j23j077zrkok63xdm8c_v1-v2-broken-signature-v2.ipns-record")
        #expect(throws: IPNSRecordError.invalidSignature) { try IPNSRecord.verified(badV2.bytes, name: badV2.name, at: now) }
        let badValue = try fixture(
            "fixtures/ipns_records/k51qzi5uqu5dlmit2tuwdvnx4sbnyqgmvbxftl0eo3f33wwtb9gr7yozae9kpw_v1-v2-broken-v1-value.ipns-record")
        #expect(throws: IPNSRecordError.fieldMismatch("Value")) {
            try IPNSRecord.verified(badValue.bytes, name: badValue.name, at: now)
        }
        // An RSA name (Qm…) inlines no Ed25519 key: stations' nodes are Ed25519, so it is refused.
        let rsa = try fixture("tooling/ipns/_fixtures/QmVujd5Vb7moysJj8itnGufN7MEtPRCNHkKpNuA4onsRa3.ipns-record")
        #expect(throws: IPNSRecordError.unsupportedKey) { try IPNSRecord.verified(rsa.bytes, name: rsa.name, at: now) }
    }

    @Test("A valid Kubo record checked against another name, or with a flipped byte, is refused")
    func recordBoundToItsName() throws {
        let good = try fixture(Self.valid[0].path)
        let other = try fixture(Self.valid[1].path)
        #expect(throws: IPNSRecordError.invalidSignature) { try IPNSRecord.verified(good.bytes, name: other.name, at: now) }
        // Every byte counts except the legacy V1 signature's, which modern verifiers ignore.
        let v1 = try #require(try IPNSRecord.Entry(protobuf: good.bytes).signatureV1)
        let v1Start = try #require((0...(good.bytes.count - v1.count)).first { Array(good.bytes[$0..<$0 + v1.count]) == v1 })
        for offset in stride(from: 0, to: good.bytes.count, by: 3) where !(v1Start..<v1Start + v1.count).contains(offset) {
            var flipped = good.bytes
            flipped[offset] ^= 0x01
            #expect(throws: IPNSRecordError.self, "byte \(offset)") { try IPNSRecord.verified(flipped, name: good.name, at: now) }
        }
        for length in [0, 1, 10, good.bytes.count / 2, good.bytes.count - 1] {
            #expect(throws: IPNSRecordError.self, "prefix \(length)") {
                try IPNSRecord.verified(good.bytes.prefix(length), name: good.name, at: now)
            }
        }
        #expect(throws: IPNSRecordError.tooLarge(IPNSRecord.maximumByteCount + 1)) {
            try IPNSRecord.verified([UInt8](repeating: 0, count: IPNSRecord.maximumByteCount + 1), name: good.name, at: now)
        }
    }

    @Test("RFC 3339 times: offsets, fractions, and the forms refused")
    func rfc3339() {
        #expect(RFC3339.date("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(RFC3339.date("1970-01-01T01:00:00+01:00") == Date(timeIntervalSince1970: 0))
        #expect(RFC3339.date("2000-02-29T12:00:00.5Z") == Date(timeIntervalSince1970: 951_825_600.5))
        for bad in ["", "2000-02-29", "2000-13-01T00:00:00Z", "2000-01-01T00:00:00", "2000-01-01T00:00:00.Z", "2000-01-01T00:00:00Zjunk"] {
            #expect(RFC3339.date(bad) == nil, "\(bad)")
        }
        #expect(RFC3339.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.string(Date(timeIntervalSince1970: 951_825_600.5)) == "2000-02-29T12:00:00.5Z")
    }
}
