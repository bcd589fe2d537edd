import ClassicalCrypto
@testable import ContentAddressing
import Foundation
@testable import StationEmulator
import TestSupport
import Testing

/// Kubo's record from gateway-conformance (`Resources/README.md`) and its name.
private func kuboRecord() throws -> (bytes: [UInt8], name: PeerID) {
    let name = "k51qzi5uqu5dlkw8pxuw9qmqayfdeh4kfebhmreauqdc6a7c3y7d5i9fi8mk9w"
    let path = "gateway-conformance/fixtures/ipns_records/\(name)_v1-v2.ipns-record"
    return ([UInt8](try resourceData(in: .module, path)), try PeerID(name))
}

@Suite("IPNS records the emulator writes")
struct IPNSRecordWritingTests {
    /// Before the records' validity ends.
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("A record made here has Kubo's layout and verifies; the data map is what Kubo signs")
    func madeRecordVerifies() throws {
        let key = Ed25519.PrivateKey()
        let name = try PeerID(ed25519PublicKey: key.publicKey)
        let validity = Date(timeIntervalSince1970: 1_900_000_000.123456)
        let bytes = IPNSRecord.make(value: "/ipfs/bafkqaddwgevxmmraojswg33smq", sequence: 7, validity: validity, signingKey: key)
        let record = try IPNSRecord.verified(bytes, name: name, at: now)
        #expect(record.value == "/ipfs/bafkqaddwgevxmmraojswg33smq")
        #expect(record.sequence == 7)
        #expect(record.validityText.hasPrefix("2030-03-17T17:46:40.12345"))
        #expect(record.ipfsCID?.description == "bafkqaddwgevxmmraojswg33smq")
        // Kubo's fixture data map, re-encoded by this writer from its own fields, is byte-identical.
        let kubo = try kuboRecord()
        let entry = try IPNSRecord.Entry(protobuf: kubo.bytes)
        let fields = try IPNSRecord.DataFields(cbor: try #require(entry.data))
        #expect(IPNSRecord.dataCBOR(value: fields.value, validity: fields.validity, sequence: fields.sequence,
                                    ttl: try #require(fields.ttl)) == entry.data)
        // Signed by another key: refused.
        let forged = IPNSRecord.make(value: "/ipfs/bafkqaddwgevxmmraojswg33smq", sequence: 8, validity: validity,
                                     signingKey: Ed25519.PrivateKey())
        #expect(throws: IPNSRecordError.invalidSignature) { try IPNSRecord.verified(forged, name: name, at: now) }
    }
}
