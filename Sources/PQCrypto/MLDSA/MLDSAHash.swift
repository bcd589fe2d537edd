#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// H = SHAKE256 as ML-DSA uses it (FIPS 204 §3.7): absorb byte strings, read a fixed-length output.
struct MLDSAHash {
    var sponge = KeccakSponge(rate: MLDSASampling.shake256Rate)

    mutating func absorb(_ bytes: UnsafeRawBufferPointer) {
        sponge.absorb(bytes)
    }

    mutating func absorb(_ bytes: some DataProtocol) {
        bytes.forEachRegion { sponge.absorb($0) }
    }

    /// Absorbs M' = 0 ‖ len(ctx) ‖ ctx ‖ M, the pure ML-DSA message framing (Algorithms 2 and 3).
    /// The context must be at most 255 bytes (checked by the callers).
    mutating func absorbFramedMessage(_ message: some DataProtocol, context: some DataProtocol) {
        let header: (UInt8, UInt8) = (0, UInt8(truncatingIfNeeded: context.count))
        withUnsafeBytes(of: header) { sponge.absorb($0) }
        absorb(context)
        absorb(message)
    }

    /// Pads, then writes `output.count` bytes of output and wipes the state.
    mutating func finalize(into output: UnsafeMutableRawBufferPointer) {
        sponge.finishAbsorbing(domainSuffix: MLDSASampling.shakeDomain)
        sponge.squeeze(into: output)
        sponge.clear()
    }

    /// Pads and returns `count` bytes of output.
    mutating func finalize(count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        output.withUnsafeMutableBytes { finalize(into: $0) }
        return output
    }
}
