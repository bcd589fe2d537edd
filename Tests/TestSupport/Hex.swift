import Foundation

/// Errors from reading test data.
public enum TestDataError: Error, CustomStringConvertible {
    case invalidHex(String)
    case missingResource(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .invalidHex(let text): "invalid hex: \(text.prefix(40))"
        case .missingResource(let name): "missing test resource \(name)"
        case .malformed(let what): "malformed test data: \(what)"
        }
    }
}

extension Array where Element == UInt8 {
    /// Decodes upper- or lowercase hex; throws on odd length or a non-hex character.
    public init(hex: String) throws {
        let utf8 = Array<UInt8>(hex.utf8)
        guard utf8.count % 2 == 0 else { throw TestDataError.invalidHex(hex) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else {
                throw TestDataError.invalidHex(hex)
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }

    /// Lowercase hex.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Data {
    /// Decodes hex (see `[UInt8](hex:)`).
    public init(hex: String) throws {
        self.init(try [UInt8](hex: hex))
    }

    /// Lowercase hex.
    public var hex: String { [UInt8](self).hex }
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// A seedable, non-cryptographic generator (SplitMix64) so that random-input tests can print and
/// replay their seed.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` pseudo-random bytes, eight per draw (so large random inputs stay cheap in debug builds).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(count, 0))
        var index = 0
        while index < bytes.count {
            var word = next()
            for _ in 0..<min(8, bytes.count - index) {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }
}
