#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ClassicalCrypto
import ContentAddressing
import OrderedJSON

// Writing IPNS records: what an emulated station's node publishes. A client only reads and
// verifies them (`ContentAddressing`'s `IPNSRecord`).

extension IPNSRecord {
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
        ProtobufWriter.appendBytes(1, Array(value.utf8), to: &out)
        ProtobufWriter.appendVarint(3, 0, to: &out)
        ProtobufWriter.appendBytes(4, Array(validityText.utf8), to: &out)
        ProtobufWriter.appendVarint(5, sequence, to: &out)
        ProtobufWriter.appendVarint(6, ttl, to: &out)
        ProtobufWriter.appendBytes(8, signature, to: &out)
        ProtobufWriter.appendBytes(9, data, to: &out)
        return out
    }

    /// The DAG-CBOR `data` map, keys in DAG-CBOR order (length first, then bytes).
    static func dataCBOR(value: [UInt8], validity: [UInt8], sequence: UInt64, ttl: UInt64) -> [UInt8] {
        var out: [UInt8] = [0xA5]
        CBORWriter.appendText("TTL", to: &out); CBORWriter.appendHead(0, ttl, to: &out)
        CBORWriter.appendText("Value", to: &out); CBORWriter.appendHead(2, UInt64(value.count), to: &out); out += value
        CBORWriter.appendText("Sequence", to: &out); CBORWriter.appendHead(0, sequence, to: &out)
        CBORWriter.appendText("Validity", to: &out); CBORWriter.appendHead(2, UInt64(validity.count), to: &out); out += validity
        CBORWriter.appendText("ValidityType", to: &out); CBORWriter.appendHead(0, 0, to: &out)
        return out
    }
}

/// The CBOR a record's `data` map is written with (definite lengths, as DAG-CBOR requires).
enum CBORWriter {
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
}

/// Protobuf fields as the package writes them (the IPNS records the emulated node publishes).
package enum ProtobufWriter {
    /// Appends field `field` as a varint (wire type 0).
    static func appendVarint(_ field: UInt64, _ value: UInt64, to out: inout [UInt8]) {
        Varint.append(field << 3, to: &out)
        Varint.append(value, to: &out)
    }

    /// Appends field `field` as length-delimited bytes (wire type 2).
    package static func appendBytes(_ field: UInt64, _ bytes: [UInt8], to out: inout [UInt8]) {
        Varint.append(field << 3 | 2, to: &out)
        Varint.append(UInt64(bytes.count), to: &out)
        out += bytes
    }
}
