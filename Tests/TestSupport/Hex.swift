import Foundation
import PQCrypto

// Test vectors are hex; these spell the package's codec, PQCrypto's `Hex`, as initialisers
// and properties so that vector tables read naturally.
extension Array where Element == UInt8 {
    /// Decodes upper- or lowercase hex; throws `HexDecodingError` on odd length or a non-hex character.
    public init(hex: String) throws {
        self = try Hex.decode(hex)
    }

    /// Lowercase hex.
    public var hex: String { Hex.encode(self) }
}

extension Data {
    /// Decodes hex (see `[UInt8](hex:)`).
    public init(hex: String) throws {
        self.init(try Hex.decode(hex))
    }

    /// Lowercase hex.
    public var hex: String { Hex.encode(self) }
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
