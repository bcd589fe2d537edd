import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import OrderedJSON

/// The stored form of a key pair holder (``DeviceCredentials``, ``FollowerIdentity``): a flat
/// JSON object whose `kem_private_key` and `signing_private_key` members are hex, built and read
/// in zeroizable storage. The hex never becomes a `String`, and the key bytes never sit in a
/// `Data` or an array that outlives the call; the other members go through `WireJSON` as usual.
enum PrivateKeyJSON {
    static let kemMember = "kem_private_key"
    static let signingMember = "signing_private_key"

    /// `{"kem_private_key":"<hex>","signing_private_key":"<hex>",<the members of others>}`.
    static func encode(kem: MLKEM768.PrivateKey, signing: MLDSA65.PrivateKey, others: JSONObject) -> SecretBytes {
        let kemKey = kem.expandedSecret
        let signingKey = signing.expandedSecret
        let head = Array(#"{"\#(kemMember)":""#.utf8)
        let middle = Array(#"",""#.utf8) + Array(#"\#(signingMember)":""#.utf8)
        var tail = Array(#"""#.utf8)
        let rest = WireJSON.serialize(.object(others))  // "{…}", no secrets
        tail += rest.count > 2 ? [UInt8(ascii: ",")] + rest.dropFirst() : [UInt8(ascii: "}")]
        let total = head.count + 2 * kemKey.count + middle.count + 2 * signingKey.count + tail.count
        return SecretBytes(count: total) { output in
            var offset = 0
            func append(_ bytes: [UInt8]) {
                UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + bytes.count)]).copyBytes(from: bytes)
                offset += bytes.count
            }
            func appendHex(_ secret: SecretBytes) {
                _ = secret.withUnsafeBytes { bytes in
                    Hex.encode(bytes, into: UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + 2 * bytes.count)]))
                }
                offset += 2 * secret.count
            }
            append(head)
            appendHex(kemKey)
            append(middle)
            appendHex(signingKey)
            append(tail)
        }
    }

    /// Reads what ``encode(kem:signing:others:)`` wrote (members in any order): the two keys, and
    /// every other member parsed from a copy that has the key hex cut out.
    ///
    /// - Throws: the reason, in words, when `secret` is not such an object or a key is invalid.
    static func decode(_ secret: SecretBytes) throws(DecodingFailure)
        -> (kem: MLKEM768.PrivateKey, signing: MLDSA65.PrivateKey, others: JSONObject) {
        try secret.withUnsafeBytes { bytes throws(DecodingFailure) in
            guard let ranges = topLevelStringRanges(bytes, members: [Array(kemMember.utf8), Array(signingMember.utf8)]) else {
                throw DecodingFailure("not a JSON object")
            }
            guard let kemRange = ranges[0] else { throw DecodingFailure("missing \(kemMember)") }
            guard let signingRange = ranges[1] else { throw DecodingFailure("missing \(signingMember)") }
            // The rest, without the key hex: `"kem_private_key":""` parses like any member.
            var redacted = [UInt8]()
            redacted.reserveCapacity(bytes.count)
            var position = 0
            for range in [kemRange, signingRange].sorted(by: { $0.lowerBound < $1.lowerBound }) {
                redacted += bytes[position..<range.lowerBound]
                position = range.upperBound
            }
            redacted += bytes[position...]
            guard let others = try? WireJSON.parse(redacted).objectValue else { throw DecodingFailure("not a JSON object") }
            do {
                let kemKey = try Hex.decodeSecret(UnsafeRawBufferPointer(rebasing: bytes[kemRange]))
                let signingKey = try Hex.decodeSecret(UnsafeRawBufferPointer(rebasing: bytes[signingRange]))
                return (try MLKEM768.PrivateKey(expandedSecret: kemKey), try MLDSA65.PrivateKey(expandedSecret: signingKey), others)
            } catch {
                throw DecodingFailure("invalid private key: \(error)")
            }
        }
    }

    /// Why stored keys could not be read.
    struct DecodingFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The byte ranges of the contents (between the quotes) of the string values of `members`
    /// among the top-level members of the JSON object in `bytes`, by index in `members`; `nil`
    /// when `bytes` is not an object, or a member is repeated or not a string.
    ///
    /// Only finds the values: everything else is checked by the parser that reads the rest.
    static func topLevelStringRanges(_ bytes: UnsafeRawBufferPointer, members: [[UInt8]]) -> [Int: Range<Int>]? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var index = 0
        func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }
        /// A string at `index`: the range of its contents; `index` moves past the closing quote.
        func string() -> Range<Int>? {
            guard index < bytes.count, bytes[index] == quote else { return nil }
            index += 1
            let start = index
            while index < bytes.count {
                if bytes[index] == quote {
                    defer { index += 1 }
                    return start..<index
                }
                index += bytes[index] == backslash ? 2 : 1
            }
            return nil
        }
        /// Any value at `index` (nested containers included); `false` when it runs off the end.
        func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case quote:
                return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case quote:
                        guard string() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return true
                        }
                    default: break
                    }
                    index += 1
                }
                return false
            default:
                let start = index
                while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                    .contains(bytes[index]) { index += 1 }
                return index > start
            }
        }
        var found: [Int: Range<Int>] = [:]
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { return found }
        while true {
            skipSpace()
            guard let name = string() else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            let nameBytes = Array(bytes[name])
            if let member = members.firstIndex(of: nameBytes) {
                guard found[member] == nil, let value = string() else { return nil }
                found[member] = value
            } else {
                guard skipValue() else { return nil }
            }
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            return found
        }
    }
}
