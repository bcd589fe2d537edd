// libFuzzer harness for the IPNS record reader: the protobuf record a gateway serves and the
// DAG-CBOR map its signature covers. Every input either reads or fails with a typed
// IPNSRecordError; a trap, a sanitizer report or a broken property is a finding.
// Build and run with Fuzz/run.sh (see Fuzz/README.md).
import ClassicalCrypto
import ContentAddressing
import Foundation
import PQCrypto
import StationEmulator

private func violated(_ property: String) -> Never {
    fatalError("property violated: \(property)")
}

/// The harness's own node key: records it signs get past the signature check, so the signed
/// data map behind it is what the input exercises.
private let node: (key: Ed25519.PrivateKey, name: PeerID) = {
    guard let key = try? Ed25519.PrivateKey(seed: SymmetricKey(data: [UInt8](repeating: 7, count: 32))),
          let name = try? PeerID(ed25519PublicKey: key.publicKey) else { violated("the harness key") }
    return (key, name)
}()

/// Reads `bytes` as a record for the harness's name; what reads must say what it was signed with.
private func read(_ bytes: [UInt8]) {
    let record: IPNSRecord
    do {
        record = try IPNSRecord.signed(bytes, name: node.name)
    } catch {
        _ = error.description
        return
    }
    _ = record.ipfsCID
    // A record written from what was read reads back the same.
    let again = IPNSRecord.make(value: record.value, sequence: record.sequence, validity: record.validity,
                                ttl: record.ttl ?? 0, signingKey: node.key)
    guard let reread = try? IPNSRecord.signed(again, name: node.name), reread.value == record.value,
          reread.sequence == record.sequence,
          abs(reread.validity.timeIntervalSince(record.validity)) < 0.001 else { violated("record round trip") }
    _ = try? IPNSRecord.verified(bytes, name: node.name, at: Date(timeIntervalSince1970: 0))
}

/// What one input may make the readers hold at once (checked by AllocationMeter.swift).
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 32, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // As a whole record (mostly refused at the signature, after the protobuf was read).
    read(bytes)

    // As the signed data map, inside a record the harness's key signed.
    let signature = node.key.signature(for: IPNSRecord.signaturePrefix + bytes)
    var signed: [UInt8] = []
    ProtobufWriter.appendBytes(8, signature, to: &signed)
    ProtobufWriter.appendBytes(9, bytes, to: &signed)
    read(signed)

    // As extra protobuf fields after a valid record: copies that must agree with the signed map,
    // unknown fields that must be skipped, a second signature or data field.
    let valid = IPNSRecord.make(value: "/ipfs/bafkqaaa", sequence: 3, validity: Date(timeIntervalSince1970: 4_000_000_000),
                                signingKey: node.key)
    read(valid + bytes)
    read(bytes + valid)
    return 0
}
