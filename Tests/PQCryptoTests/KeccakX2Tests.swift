import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// The two-state Keccak used for matrix expansion and noise sampling must produce, in each lane,
/// exactly the SHAKE stream of that lane's input.
@Suite("Keccak two-state sponge")
struct KeccakX2Tests {
    @Test(arguments: [(168, 34), (136, 33), (168, 0), (136, 135), (168, 167)])
    func lanesMatchSHAKE(rate: Int, inputLength: Int) throws {
        var rng = SplitMix64(seed: UInt64(rate * 1000 + inputLength))
        let first = rng.bytes(inputLength), second = rng.bytes(inputLength)
        let blocks = 5
        var out0 = [UInt8](repeating: 0, count: blocks * rate), out1 = out0
        first.withUnsafeBytes { a in
            second.withUnsafeBytes { b in
                var sponge = KeccakSpongeX2(rate: rate, first: a, second: b)
                out0.withUnsafeMutableBytes { o0 in
                    out1.withUnsafeMutableBytes { o1 in
                        guard let p0 = o0.baseAddress, let p1 = o1.baseAddress else { return }
                        // Read 2 blocks, then 3 more, to cover repeated squeezes.
                        sponge.squeezeBlocks(first: p0, second: p1, blocks: 2)
                        sponge.squeezeBlocks(first: p0 + 2 * rate, second: p1 + 2 * rate, blocks: 3)
                    }
                }
            }
        }
        func shake(_ data: [UInt8]) -> [UInt8] {
            rate == 168 ? SHAKE128.hash(data: data, outputByteCount: blocks * rate)
                : SHAKE256.hash(data: data, outputByteCount: blocks * rate)
        }
        #expect(out0 == shake(first))
        #expect(out1 == shake(second))
    }
}
