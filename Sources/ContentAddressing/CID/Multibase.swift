import PQCrypto

/// The text encodings (multibases) CIDs, peer ids and IPNS names use.
package enum Multibase: Sendable, Hashable, CaseIterable {
    /// Bitcoin base58, prefix `z`; also the bare encoding of CIDv0 (`Qm…`) and peer ids (`12D3KooW…`).
    case base58btc
    /// RFC 4648 base32, lowercase, no padding, prefix `b`: the default for CIDv1 (`bafy…`).
    case base32
    /// Base36, lowercase, prefix `k`: IPNS names (`k51…`), the form subdomain gateways accept.
    case base36
    /// Lowercase hex, prefix `f`.
    case base16

    /// The one-character multibase prefix.
    var prefix: Character {
        switch self {
        case .base58btc: "z"
        case .base32: "b"
        case .base36: "k"
        case .base16: "f"
        }
    }

    /// Encodes `bytes` without the prefix.
    package func encode(_ bytes: [UInt8]) -> String {
        switch self {
        case .base58btc: BaseX.encode(bytes, alphabet: BaseX.base58Alphabet)
        case .base36: BaseX.encode(bytes, alphabet: BaseX.base36Alphabet)
        case .base32: Base32.encode(bytes)
        case .base16: Base16.encode(bytes)
        }
    }

    /// Decodes text without the prefix. Base32, base36 and base16 accept either case (the
    /// multibase prefix says which; both decode alike).
    ///
    /// - Throws: ``CIDError/invalidCharacter(offset:)`` at the first character outside the alphabet.
    package func decode(_ text: Substring) throws(CIDError) -> [UInt8] {
        switch self {
        case .base58btc: try BaseX.decode(text, alphabet: BaseX.base58Alphabet, caseInsensitive: false)
        case .base36: try BaseX.decode(text, alphabet: BaseX.base36Alphabet, caseInsensitive: true)
        case .base32: try Base32.decode(text)
        case .base16: try Base16.decode(text)
        }
    }

    /// The base for a multibase prefix character, or `nil`.
    static func forPrefix(_ prefix: Character) -> Multibase? {
        switch prefix {
        case "z": .base58btc
        case "b", "B": .base32
        case "k", "K": .base36
        case "f", "F": .base16
        default: nil
        }
    }
}

/// Big-number base conversion (base58btc, base36): leading zero bytes become leading zero digits.
enum BaseX {
    static let base58Alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    static let base36Alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)

    static func encode(_ bytes: [UInt8], alphabet: [UInt8]) -> String {
        let base = UInt32(alphabet.count)
        let zeros = bytes.prefix { $0 == 0 }.count
        var digits = [UInt8]()  // little-endian digits in `base`
        digits.reserveCapacity(bytes.count * 2)
        for byte in bytes[zeros...] {
            var carry = UInt32(byte)
            for index in digits.indices {
                carry += UInt32(digits[index]) << 8
                digits[index] = UInt8(carry % base)
                carry /= base
            }
            while carry > 0 {
                digits.append(UInt8(carry % base))
                carry /= base
            }
        }
        var text = [UInt8](repeating: alphabet[0], count: zeros)
        text.append(contentsOf: digits.reversed().map { alphabet[Int($0)] })
        return String(decoding: text, as: UTF8.self)
    }

    static func decode(_ text: Substring, alphabet: [UInt8], caseInsensitive: Bool) throws(CIDError) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(value)
            if caseInsensitive, character >= UInt8(ascii: "a"), character <= UInt8(ascii: "z") {
                table[Int(character - 32)] = UInt8(value)
            }
        }
        let base = UInt32(alphabet.count)
        let characters = Array(text.utf8)
        let zeros = characters.prefix { $0 == alphabet[0] }.count
        var bytes = [UInt8]()  // little-endian base-256 digits
        for (offset, character) in characters.enumerated().dropFirst(zeros) {
            let value = table[Int(character)]
            guard value != 0xFF else { throw .invalidCharacter(offset: offset) }
            var carry = UInt32(value)
            for index in bytes.indices {
                carry += UInt32(bytes[index]) * base
                bytes[index] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: zeros) + bytes.reversed()
    }
}

/// RFC 4648 base32 (lowercase alphabet, no padding).
enum Base32 {
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var text = [UInt8]()
        text.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                text.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { text.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: text, as: UTF8.self)
    }

    static func decode(_ text: Substring) throws(CIDError) -> [UInt8] {
        var bytes = [UInt8]()
        var buffer: UInt32 = 0
        var bits = 0
        for (offset, character) in text.utf8.enumerated() {
            let value: UInt32
            switch character {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a"))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = UInt32(character - UInt8(ascii: "2")) + 26
            default: throw .invalidCharacter(offset: offset)
            }
            buffer = buffer << 5 | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits must be zero padding, or the text was not made by an encoder.
        if buffer != 0 { throw .invalidCharacter(offset: text.utf8.count - 1) }
        return bytes
    }
}

/// Hex (lowercase out, either case in), through PQCrypto's ``Hex`` with this module's errors.
enum Base16 {
    static func encode(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static func decode(_ text: Substring) throws(CIDError) -> [UInt8] {
        do {
            return try Hex.decode(text)
        } catch {
            // An odd length fails at the offset past the last whole pair, as the old reader did.
            throw .invalidCharacter(offset: error.offset ?? error.count ?? text.utf8.count)
        }
    }
}
