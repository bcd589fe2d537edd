import ClassicalCrypto
import Foundation
import TestSupport

/// Random inputs for the differential tests, which compare each pure-Swift primitive (what Apple
/// platforms run) with libsodium (what Linux runs by default) on the same bytes.
///
/// The count per primitive is `CIPHER_DIFFERENTIAL_COUNT` (default 200, what a debug build affords
/// in the test command); a release run takes 10,000 or more:
/// `CIPHER_DIFFERENTIAL_COUNT=10000 swift test -c release --filter Differential`. The seed is
/// `CIPHER_DIFFERENTIAL_SEED` (default fixed), printed by a failing expectation so it can be replayed.
enum DifferentialInputs {
    /// Whether there is a second implementation to compare with: libsodium is linked.
    static let comparable = ClassicalCryptoBuild.usesSystemLibraries

    /// Inputs per primitive.
    static let count = ProcessInfo.processInfo.environment["CIPHER_DIFFERENTIAL_COUNT"].flatMap(Int.init) ?? 200

    /// The generator's seed.
    static let seed = ProcessInfo.processInfo.environment["CIPHER_DIFFERENTIAL_SEED"].flatMap(UInt64.init) ?? 0x5eed_c1a5_51ca_1

    /// Message lengths every run covers (block and chunk edges), before the random ones.
    static let edgeLengths = [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 4095, 4096, 4097,
                              65535, 65536, 65537]

    /// The length of input `index`: the edge lengths first, then mostly short random lengths with
    /// one in eight up to 70,000 bytes (past 64 KiB).
    static func length(_ index: Int, using generator: inout SplitMix64) -> Int {
        if index < edgeLengths.count { return edgeLengths[index] }
        return generator.next() % 8 == 0 ? Int(generator.next() % 70_001) : Int(generator.next() % 1_100)
    }
}

extension SplitMix64 {
    /// Random split points of `count` bytes into pieces (some empty), ascending, ending at `count`.
    mutating func splits(of count: Int) -> [Int] {
        var points = (0..<Int.random(in: 0...4, using: &self)).map { _ in count == 0 ? 0 : Int.random(in: 0...count, using: &self) }
        points.append(count)
        return points.sorted()
    }
}

/// Feeds `bytes` to `update` in the pieces `splits` marks.
func feed(_ bytes: [UInt8], splits: [Int], _ update: (UnsafeRawBufferPointer) -> Void) {
    bytes.withUnsafeBytes { buffer in
        var start = 0
        for end in splits {
            update(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
            start = end
        }
    }
}
