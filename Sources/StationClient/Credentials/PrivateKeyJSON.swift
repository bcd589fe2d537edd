import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import OrderedJSON

/// The stored form of a key pair holder (``DeviceCredentials``, ``FollowerIdentity``): a flat
/// JSON object built and read in zeroizable storage.
///
/// Each key is stored in one of two kinds. A pure-Swift key is exportable: its expanded encoding
/// is the hex member `kem_private_key` / `signing_private_key` (what version 1 wrote; the hex
/// never becomes a `String`, and the key bytes never sit in a `Data` or an array that outlives
/// the call). A key the app keeps itself (``ReferenceStorableKey``) is stored by reference:
/// `kem_key_reference` / `signing_key_reference` (hex of the app's opaque reference) beside
/// `kem_public_key` / `signing_public_key`, and the object's `version` becomes 2, so an earlier
/// SDK refuses it instead of misreading it. The other members go through `WireJSON` as usual.
enum PrivateKeyJSON {
    static let kemMember = "kem_private_key"
    static let signingMember = "signing_private_key"
    static let kemReferenceMember = "kem_key_reference"
    static let signingReferenceMember = "signing_key_reference"
    static let kemPublicKeyMember = "kem_public_key"
    static let signingPublicKeyMember = "signing_public_key"
    /// The `version` of an object holding a key by reference (one holding bytes only keeps its own).
    static let referenceVersion = 2

    /// The keys' stored form: exportable keys as secret hex members (first, in this order),
    /// reference keys as reference and public-key members, then the members of `others`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) for a key that is neither exportable nor
    ///   ``ReferenceStorableKey``, or whose reference cannot be produced.
    static func encode(
        kem: any MLKEM768DecapsulationKey, signing: any MLDSA65SigningKey, others: JSONObject, operation: String
    ) throws(StationClientError) -> SecretBytes {
        var others = others
        var secrets: [(member: String, bytes: SecretBytes)] = []
        var byReference = false
        func storeReference(of key: Any, publicKey: Data, _ member: String, _ publicMember: String, _ what: String) throws(StationClientError) {
            guard let storable = key as? any ReferenceStorableKey else {
                throw StationClientError(
                    .keyStore, operation: operation,
                    message: "the \(what) key can neither be exported nor give a reference (ReferenceStorableKey), so it cannot be saved")
            }
            let reference: Data
            do {
                reference = try storable.keyReference
            } catch {
                throw StationClientError(.keyStore, operation: operation, message: "the \(what) key gave no reference: \(error)",
                                         underlying: error)
            }
            others[member] = .string(Hex.encode(reference))
            others[publicMember] = .string(Hex.encode(publicKey))
            byReference = true
        }
        if let key = kem as? MLKEM768.PrivateKey {
            secrets.append((kemMember, key.expandedSecret))
        } else {
            try storeReference(of: kem, publicKey: kem.publicKey.rawRepresentation, kemReferenceMember, kemPublicKeyMember, "ML-KEM-768")
        }
        if let key = signing as? MLDSA65.PrivateKey {
            secrets.append((signingMember, key.expandedSecret))
        } else {
            try storeReference(of: signing, publicKey: signing.publicKey.rawRepresentation, signingReferenceMember,
                               signingPublicKeyMember, "ML-DSA-65")
        }
        if byReference { others["version"] = .number(JSONNumber(referenceVersion)) }
        return encode(secrets: secrets, others: others)
    }

    /// `{"<member>":"<hex>",…,<the members of others>}`, the hex written straight into the output.
    private static func encode(secrets: [(member: String, bytes: SecretBytes)], others: JSONObject) -> SecretBytes {
        let rest = WireJSON.serialize(.object(others))  // "{…}", no secrets
        var pieces: [[UInt8]] = []  // around the hex: pieces[i] ‖ hex(secrets[i]) ‖ … ‖ pieces.last
        var piece = [UInt8(ascii: "{")]
        for (index, secret) in secrets.enumerated() {
            piece += Array((index == 0 ? "" : ",").utf8) + Array(#""\#(secret.member)":""#.utf8)
            pieces.append(piece)
            piece = [UInt8(ascii: "\"")]
        }
        if rest.count > 2 {
            if !secrets.isEmpty { piece.append(UInt8(ascii: ",")) }
            piece += rest.dropFirst()
        } else {
            piece.append(UInt8(ascii: "}"))
        }
        pieces.append(piece)
        let total = pieces.reduce(0) { $0 + $1.count } + secrets.reduce(0) { $0 + 2 * $1.bytes.count }
        return SecretBytes(count: total) { output in
            var offset = 0
            func append(_ bytes: [UInt8]) {
                UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + bytes.count)]).copyBytes(from: bytes)
                offset += bytes.count
            }
            for (index, secret) in secrets.enumerated() {
                append(pieces[index])
                _ = secret.bytes.withUnsafeBytes { bytes in
                    Hex.encode(bytes, into: UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + 2 * bytes.count)]))
                }
                offset += 2 * secret.bytes.count
            }
            append(pieces[pieces.count - 1])
        }
    }

    /// Reads what ``encode(kem:signing:others:operation:)`` wrote (members in any order): the two
    /// keys, and every other member, parsed from a copy that has the key hex cut out. A key stored
    /// by reference is resolved by `resolver`, and must have the stored public key.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when `secret` is not such an object, a key is
    ///   invalid or missing, a key is stored by reference and there is no `resolver`, or the
    ///   resolver fails or returns a key with another public key.
    static func decode(
        _ secret: SecretBytes, resolver: KeyReferenceResolver?, operation: String
    ) throws(StationClientError) -> (keys: DeviceKeys, others: JSONObject) {
        func bad(_ why: String, _ underlying: (any Error)? = nil) -> StationClientError {
            StationClientError(.keyStore, operation: operation, message: why, underlying: underlying)
        }
        let stored: (kem: MLKEM768.PrivateKey?, signing: MLDSA65.PrivateKey?, others: JSONObject)
        do {
            stored = try decodeBytes(secret)
        } catch {
            throw bad(error.description)
        }
        let others = stored.others
        if let version = others["version"], version.intValue.map({ $0 > referenceVersion }) ?? true {
            throw bad("stored by a newer version of the SDK (version \(version)); update the app to read it")
        }
        /// The reference and public key stored for a key, or `nil` when it has none.
        func reference(_ member: String, _ publicMember: String) throws(StationClientError) -> (reference: Data, publicKey: [UInt8])? {
            guard let referenceHex = others[member]?.stringValue else { return nil }
            guard let reference = try? Hex.decode(referenceHex), let publicHex = others[publicMember]?.stringValue,
                  let publicKey = try? Hex.decode(publicHex) else {
                throw bad("invalid \(member) or \(publicMember)")
            }
            guard resolver != nil else {
                throw bad("a key is stored by reference to a key the app keeps: load with a KeyReferenceResolver")
            }
            return (Data(reference), publicKey)
        }
        func resolved<Key>(
            _ what: String, _ lookup: () throws -> Key, _ publicKey: (Key) -> Data, expected: [UInt8]
        ) throws(StationClientError) -> Key {
            let key: Key
            do {
                key = try lookup()
            } catch {
                throw bad("the app could not resolve the stored \(what) key reference: \(error)", error)
            }
            guard [UInt8](publicKey(key)) == expected else {
                throw bad("the key resolved for the stored \(what) reference has another public key than the stored one")
            }
            return key
        }
        let kemKey: any MLKEM768DecapsulationKey
        if let key = stored.kem {
            kemKey = key
        } else if let stored = try reference(kemReferenceMember, kemPublicKeyMember), let resolver {
            guard let publicKey = try? MLKEM768.PublicKey(rawRepresentation: stored.publicKey) else { throw bad("invalid \(kemPublicKeyMember)") }
            kemKey = try resolved("ML-KEM-768", { try resolver.kemKey(stored.reference, publicKey) }, { $0.publicKey.rawRepresentation },
                                  expected: stored.publicKey)
        } else {
            throw bad("missing \(kemMember)")
        }
        let signingKey: any MLDSA65SigningKey
        if let key = stored.signing {
            signingKey = key
        } else if let stored = try reference(signingReferenceMember, signingPublicKeyMember), let resolver {
            guard let publicKey = try? MLDSA65.PublicKey(rawRepresentation: stored.publicKey) else {
                throw bad("invalid \(signingPublicKeyMember)")
            }
            signingKey = try resolved("ML-DSA-65", { try resolver.signingKey(stored.reference, publicKey) },
                                      { $0.publicKey.rawRepresentation }, expected: stored.publicKey)
        } else {
            throw bad("missing \(signingMember)")
        }
        return (DeviceKeys(kemKey: kemKey, signingKey: signingKey), others)
    }

    /// The exportable keys (each `nil` when not stored as bytes) and every other member, parsed
    /// from a copy that has the key hex cut out.
    ///
    /// - Throws: the reason, in words, when `secret` is not such an object or a key is invalid.
    static func decodeBytes(_ secret: SecretBytes) throws(DecodingFailure)
        -> (kem: MLKEM768.PrivateKey?, signing: MLDSA65.PrivateKey?, others: JSONObject) {
        try secret.withUnsafeBytes { bytes throws(DecodingFailure) in
            guard let ranges = topLevelStringRanges(bytes, members: [Array(kemMember.utf8), Array(signingMember.utf8)]) else {
                throw DecodingFailure("not a JSON object")
            }
            // The rest, without the key hex: `"kem_private_key":""` parses like any member.
            var redacted = [UInt8]()
            redacted.reserveCapacity(bytes.count)
            var position = 0
            for range in ranges.values.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                redacted += bytes[position..<range.lowerBound]
                position = range.upperBound
            }
            redacted += bytes[position...]
            guard let others = try? WireJSON.parse(redacted).objectValue else { throw DecodingFailure("not a JSON object") }
            do {
                let kem = try ranges[0].map { range throws in
                    try MLKEM768.PrivateKey(expandedSecret: try Hex.decodeSecret(UnsafeRawBufferPointer(rebasing: bytes[range])))
                }
                let signing = try ranges[1].map { range throws in
                    try MLDSA65.PrivateKey(expandedSecret: try Hex.decodeSecret(UnsafeRawBufferPointer(rebasing: bytes[range])))
                }
                return (kem, signing, others)
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
