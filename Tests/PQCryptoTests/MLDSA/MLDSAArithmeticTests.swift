import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// The building blocks of ML-DSA-65 against their FIPS 204 definitions: the field, the NTT, the
/// rounding functions and the encodings.
@Suite("ML-DSA-65 arithmetic and encodings")
struct MLDSAArithmeticTests {
    static let q = Int64(MLDSA65Parameters.q)
    static let gamma2 = Int64(MLDSA65Parameters.gamma2)

    /// x mod± m: the representative in (−m/2, m/2].
    static func centeredMod(_ x: Int64, _ m: Int64) -> Int64 {
        var r = ((x % m) + m) % m
        if r > m / 2 { r -= m }
        return r
    }

    static func powMod(_ base: Int64, _ exponent: Int, _ m: Int64) -> Int64 {
        var result: Int64 = 1, b = base % m, e = exponent
        while e > 0 {
            if e & 1 == 1 { result = result * b % m }
            b = b * b % m
            e >>= 1
        }
        return result
    }

    static let r = Int64(1) << 32

    @Test func zetaTableMatchesDefinition() {
        for k in 1..<256 {
            var reversed = 0
            for bit in 0..<8 where k & (1 << bit) != 0 { reversed |= 1 << (7 - bit) }
            let expected = Self.powMod(1753, reversed, Self.q) * (Self.r % Self.q) % Self.q
            #expect(Int64(MLDSANTT.zetas[k]) == expected, "ζ[\(k)]")
        }
        // 256 · inverseScale ≡ 2^64 (mod q)
        #expect(256 * Int64(MLDSANTT.inverseScale) % Self.q == (Self.r % Self.q) * (Self.r % Self.q) % Self.q)
    }

    @Test func montgomeryReductionIsExact() {
        var rng = SplitMix64(seed: 1)
        let limit = UInt64(Self.r) * UInt64(Self.q)
        var samples = (0..<20_000).map { _ in rng.next() % limit }
        samples += [0, 1, limit - 1, UInt64(Self.q), UInt64(Self.r) - 1]
        for x in samples {
            let reduced = MLDSAField.montgomeryReduce(x)
            #expect(Int64(reduced) < 2 * Self.q, "range of reduce(\(x))")
            // reduced · 2^32 ≡ x (mod q)
            let lhs = Int64(reduced) % Self.q * (Self.r % Self.q) % Self.q
            #expect(lhs == Int64(x % UInt64(Self.q)), "reduce(\(x))")
        }
        for x: UInt32 in [0, 1, UInt32(Self.q) - 1, UInt32(Self.q), UInt32(2 * Self.q - 1), UInt32.max, 123_456_789] {
            #expect(Int64(MLDSAField.canonical(x)) == Int64(x) % Self.q, "canonical(\(x))")
        }
    }

    /// Schoolbook multiplication in Z_q[X]/(X^256 + 1).
    static func negacyclicProduct(_ a: [Int32], _ b: [Int32]) -> [Int64] {
        var c = [Int64](repeating: 0, count: 256)
        for i in 0..<256 {
            for j in 0..<256 {
                let product = Int64(a[i]) * Int64(b[j]) % q
                if i + j < 256 { c[i + j] += product } else { c[i + j - 256] -= product }
            }
        }
        return c.map { centeredMod($0, q) }
    }

    @Test func nttMultipliesAndInverts() {
        var rng = SplitMix64(seed: 2)
        let q = MLDSA65Parameters.q
        for round in 0..<3 {
            // Inputs use the full |a| < q range the transforms allow.
            let a = (0..<256).map { _ in Int32(truncatingIfNeeded: Int64(rng.next() % UInt64(2 * q - 1)) - Int64(q) + 1) }
            let b = (0..<256).map { _ in Int32(truncatingIfNeeded: Int64(rng.next() % 9) - 4) }
            var aHat = [UInt32](repeating: 0, count: 256), bHat = aHat, product = aHat
            var back = [Int32](repeating: 0, count: 256), result = back
            MLDSANTT.forward(a, into: &aHat)
            MLDSANTT.forward(b, into: &bHat)
            #expect(aHat.allSatisfy { $0 < 18 * UInt32(q) }, "forward output bound")
            for i in 0..<256 { product[i] = MLDSAField.montgomeryMultiply(aHat[i], bHat[i]) }
            MLDSANTT.inverse(&product, into: &result)
            #expect(result.map { Self.centeredMod(Int64($0), Self.q) } == Self.negacyclicProduct(a, b),
                    "NTT product, round \(round)")
            // A product by 1 supplies the factor 2^-32 that the inverse takes back.
            var plain = aHat.map { MLDSAField.montgomeryMultiply($0, 1) }
            MLDSANTT.inverse(&plain, into: &back)
            #expect(zip(back, a).allSatisfy { Self.centeredMod(Int64($0) - Int64($1), Self.q) == 0 }, "round trip")
            #expect(back.allSatisfy { 0 <= $0 && $0 < q }, "inverse output is in [0, q)")
        }
    }

    /// Exact product in Z[X]/(X^256 + 1), no reduction.
    static func exactNegacyclicProduct(_ a: [Int32], _ b: [Int32]) -> [Int64] {
        var c = [Int64](repeating: 0, count: 256)
        for i in 0..<256 where a[i] != 0 {
            for j in 0..<256 {
                let product = Int64(a[i]) * Int64(b[j])
                if i + j < 256 { c[i + j] += product } else { c[i + j - 256] -= product }
            }
        }
        return c
    }

    /// c·v for each of `polynomials` consecutive polynomials of `v` through the aligned extended
    /// form the keys hold, one `multiply` call per polynomial (so that `first` is exercised).
    static func alignedProduct<T: FixedWidthInteger & SignedInteger & BitwiseCopyable>(
        _ v: [Int32], polynomials: Int, of _: T.Type, offsets: [Int], counts: (plus: Int, minus: Int),
        multiply: (_ ext: UnsafePointer<T>, _ first: Int, _ aligned: UnsafePointer<Int>, _ out: UnsafeMutablePointer<T>) -> Void
    ) -> [T] {
        let n = 256
        let ext = MLDSABuffer<T>(count: MLDSAChallenge.alignedCount(polynomials: polynomials, of: T.self))
        v.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            MLDSAChallenge.extendAligned(base, count: polynomials, into: ext.base)
        }
        let aligned = MLDSABuffer<Int>(count: MLDSAChallenge.offsetCapacity)
        offsets.withUnsafeBufferPointer { list in
            guard let base = list.baseAddress else { return }
            MLDSAChallenge.alignedOffsets(base, counts: counts, polynomials: polynomials, of: T.self, into: aligned.base)
        }
        let out = MLDSABuffer<T>(count: polynomials * n)
        for p in 0..<polynomials { multiply(ext.base, p, aligned.base, out.base + p * n) }
        return (0..<(polynomials * n)).map { out.base[$0] }
    }

    /// The signer's two-state schedule against FIPS 204's definitions, one stream at a time: y of
    /// each attempt is ExpandMask(ρ'', 5·attempt) (Algorithm 34), the challenge hash is
    /// H(μ ‖ w1Encode(w1), 48), and c is SampleInBall(c̃) (Algorithm 29, as the verifier computes
    /// it) with its nonzero positions listed.
    @Test func signingScheduleMatchesDefinitions() {
        var rng = SplitMix64(seed: 11)
        let n = 256, l = MLDSA65Parameters.l, tau = MLDSA65Parameters.tau
        let rho = MLDSABytes(count: 64)
        for i in 0..<64 { rho.base[i] = UInt8(truncatingIfNeeded: rng.next()) }
        let masks = MLDSAPolynomials(polynomials: MLDSAMaskSchedule.maskPolynomials)
        let scratch = MLDSABytes(count: MLDSAMaskSchedule.scratchBytes)
        var schedule = MLDSAMaskSchedule(
            rhoDoublePrime: rho.base, masks: masks.base, scratch: UnsafeMutableRawPointer(scratch.base))
        let positions = MLDSABuffer<Int>(count: tau)
        let c = MLDSAPolynomials(polynomials: 1)
        for attempt in 0..<7 {
            schedule.fill(attempt: attempt)
            let y = schedule.mask(attempt: attempt)
            for r in 0..<l {
                var sponge = KeccakSponge(rate: MLDSASampling.shake256Rate)
                sponge.absorb((0..<64).map { rho.base[$0] } + [UInt8((5 * attempt + r) & 255), UInt8((5 * attempt + r) >> 8)])
                sponge.finishAbsorbing(domainSuffix: MLDSASampling.shakeDomain)
                var stream = [UInt8](repeating: 0, count: 640)
                stream.withUnsafeMutableBytes { sponge.squeeze(into: $0) }
                var expected = [Int32](repeating: 0, count: n)
                MLDSAEncoding.unpackZ(stream, into: &expected)
                #expect((0..<n).map { y[r * n + $0] } == expected, "y, attempt \(attempt), polynomial \(r)")
            }
            let message = (0..<832).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            var challenge = [UInt8](repeating: 0, count: 48)
            message.withUnsafeBytes { input in
                challenge.withUnsafeMutableBytes { schedule.challengeHash(attempt: attempt, message: input, into: $0) }
            }
            var hash = MLDSAHash()
            message.withUnsafeBytes { hash.absorb($0) }
            #expect(challenge == hash.finalize(count: 48), "c̃, attempt \(attempt)")
            var expected = [Int32](repeating: 0, count: n)
            challenge.withUnsafeBytes { MLDSASampling.sampleInBall($0, into: &expected) }
            challenge.withUnsafeBytes {
                schedule.sampleInBall(attempt: attempt, challenge: $0, into: c.base, positions: positions.base)
            }
            #expect((0..<n).map { c.base[$0] } == expected, "c, attempt \(attempt)")
            #expect(Set((0..<tau).map { positions.base[$0] }) == Set((0..<n).filter { expected[$0] != 0 }),
                    "positions, attempt \(attempt)")
        }
        schedule.clear()
    }

    /// The signer's and verifier's challenge products (49 shifted windows of an extended
    /// polynomial) against schoolbook multiplication, at the extremes of each operand's range:
    /// s1, s2 in [−4, 4] (Int16), t1 − 512 in [−512, 511] (Int16), t0 in (−2^12, 2^12] (Int32),
    /// and the all-ones product that restores c·t1.
    @Test func challengeProductsMatchSchoolbook() {
        var rng = SplitMix64(seed: 9)
        let n = 256, tau = MLDSA65Parameters.tau
        for round in 0..<6 {
            var c = [Int32](repeating: 0, count: n)
            var seed = [UInt8](repeating: 0, count: 48)
            for i in 0..<48 { seed[i] = UInt8(truncatingIfNeeded: rng.next()) }
            seed.withUnsafeBytes { MLDSASampling.sampleInBall($0, into: &c) }
            if round == 0 { for i in 0..<n { c[i] = i < tau ? 1 : 0 } }            // all +1, at the start
            if round == 1 { for i in 0..<n { c[i] = i >= n - tau ? -1 : 0 } }      // all −1, at the end
            #expect(c.filter { $0 != 0 }.count == tau)
            var offsets = [Int](repeating: 0, count: MLDSAChallenge.offsetCapacity)
            let counts = MLDSAChallenge.offsets(of: c, into: &offsets)
            #expect(counts.plus == c.filter { $0 > 0 }.count && counts.minus == c.filter { $0 < 0 }.count)

            for bound: Int32 in [4, 512] {
                var v = (0..<n).map { _ in Int32(Int64(rng.next() % UInt64(2 * bound)) - Int64(bound)) }
                v[0] = -bound
                v[n - 1] = bound - (bound == 512 ? 1 : 0)
                if round == 0 { v = v.map { _ in bound == 512 ? -512 : 4 } }       // the largest sums
                // Two polynomials (v, −v), so that the polynomial stride and `first` count too.
                let out = Self.alignedProduct(v + v.map { 0 - $0 }, polynomials: 2, of: Int16.self,
                                              offsets: offsets, counts: counts) { ext, first, aligned, out in
                    MLDSAChallenge.multiply(ext, first: first, count: 1, aligned: aligned, counts: counts, into: out)
                }
                let exact = Self.exactNegacyclicProduct(c, v)
                #expect(out[0..<n].map(Int64.init) == exact, "Int16, bound \(bound), round \(round)")
                #expect(out[n...].map(Int64.init) == exact.map { 0 - $0 }, "Int16, negated, bound \(bound), round \(round)")
            }
            var t0 = (0..<n).map { _ in Int32(Int64(rng.next() % 8192) - 4095) }
            if round == 0 { t0 = t0.map { _ in 4096 } }
            let out32 = Self.alignedProduct(t0, polynomials: 1, of: Int32.self,
                                            offsets: offsets, counts: counts) { ext, first, aligned, out in
                MLDSAChallenge.multiply(ext, first: first, count: 1, aligned: aligned, counts: counts, into: out)
            }
            #expect(out32.map(Int64.init) == Self.exactNegacyclicProduct(c, t0), "Int32, round \(round)")

            var ones = [Int32](repeating: 0, count: n)
            MLDSAChallenge.allOnesProduct(c, into: &ones)
            #expect(ones.map(Int64.init) == Self.exactNegacyclicProduct(c, [Int32](repeating: 1, count: n)),
                    "all-ones product, round \(round)")
        }
    }

    /// The extremes of the transforms' input ranges: no lane overflows 32 bits (an overflow would
    /// lose a multiple of 2^32, which is not a multiple of q).
    @Test func nttBoundsHoldAtTheExtremes() {
        let q = MLDSA65Parameters.q
        for value in [q - 1, -(q - 1)] {
            var hat = [UInt32](repeating: 0, count: 256)
            MLDSANTT.forward([Int32](repeating: value, count: 256), into: &hat)
            #expect(hat.allSatisfy { $0 < 18 * UInt32(q) })
            // NTT(constant c) = c·NTT(1): compare against the transform of 1, times c.
            var one = [UInt32](repeating: 0, count: 256)
            MLDSANTT.forward([1] + [Int32](repeating: 0, count: 255), into: &one)
            var constant = [UInt32](repeating: 0, count: 256)
            MLDSANTT.forward([value] + [Int32](repeating: 0, count: 255), into: &constant)
            #expect(zip(constant, one).allSatisfy {
                (Int64($0) - Int64($1) * Int64(value)) % Self.q == 0
            })
        }
        // The inverse on its largest input, and on a random one: forward(inverse(x)) ≡ x·2^32.
        var rng = SplitMix64(seed: 7)
        let inputs: [[UInt32]] = [
            [UInt32](repeating: 2 * UInt32(q) - 1, count: 256),
            (0..<256).map { $0 % 2 == 0 ? 2 * UInt32(q) - 1 : 0 },
            (0..<256).map { _ in UInt32(rng.next() % UInt64(2 * q)) },
        ]
        for input in inputs {
            var scratch = input
            var output = [Int32](repeating: 0, count: 256)
            MLDSANTT.inverse(&scratch, into: &output)
            var again = [UInt32](repeating: 0, count: 256)
            MLDSANTT.forward(output, into: &again)
            #expect(zip(again, input).allSatisfy {
                (Int64($0) - Int64($1) % Self.q * (Self.r % Self.q)) % Self.q == 0
            })
        }
    }

    /// Decompose (Algorithm 36) as written in FIPS 204.
    static func referenceDecompose(_ r: Int64) -> (Int64, Int64) {
        let r0 = centeredMod(r, 2 * gamma2)
        if r - r0 == q - 1 { return (0, r0 - 1) }
        return ((r - r0) / (2 * gamma2), r0)
    }

    /// Every r in [0, q) near a multiple of 2γ2, the top range, and a stride through the rest.
    static var decomposeSamples: [Int64] {
        var samples = Set<Int64>()
        var r: Int64 = 0
        while r < q { samples.insert(r); r += 61 }
        for m in stride(from: Int64(0), through: q, by: Int(2 * gamma2)) {
            for d: Int64 in -300...300 where (0..<q).contains(m + d) { samples.insert(m + d) }
            for d: Int64 in -300...300 where (0..<q).contains(m + gamma2 + d) { samples.insert(m + gamma2 + d) }
        }
        for d in 0..<(gamma2 + 300) { samples.insert(q - 1 - d) }
        return samples.sorted()
    }

    @Test func roundingFunctionsMatchDefinitions() {
        for r in Self.decomposeSamples {
            let (high, low) = MLDSAField.decompose(Int32(r))
            let (expectedHigh, expectedLow) = Self.referenceDecompose(r)
            #expect(Int64(high) == expectedHigh && Int64(low) == expectedLow, "Decompose(\(r))")
            // Power2Round (Algorithm 35)
            let (t1, t0) = MLDSAField.power2Round(Int32(r))
            let expectedT0 = Self.centeredMod(r, 1 << 13)
            #expect(Int64(t0) == expectedT0 && Int64(t1) == (r - expectedT0) >> 13, "Power2Round(\(r))")
            // UseHint (Algorithm 40)
            let m: Int64 = 16
            #expect(Int64(MLDSAField.useHint(0, Int32(r))) == expectedHigh)
            let hinted = expectedLow > 0 ? (expectedHigh + 1) % m : (expectedHigh - 1 + m) % m
            #expect(Int64(MLDSAField.useHint(1, Int32(r))) == hinted, "UseHint(1, \(r))")
        }
    }

    /// The signer's hint h = MakeHint(w0 − c·s2 + c·t0, w1) equals FIPS 204's
    /// MakeHint(−c·t0, w − c·s2 + c·t0) = [HighBits(w − c·s2) ≠ HighBits(w − c·s2 + c·t0)]
    /// whenever the signer's earlier checks passed.
    @Test func makeHintMatchesDefinition() {
        var rng = SplitMix64(seed: 3)
        let beta = Int64(MLDSA65Parameters.beta)
        var ones = 0, checked = 0
        while checked < 200_000 {
            let w = Int64(rng.next() % UInt64(Self.q))
            let cs2 = Int64(rng.next() % UInt64(2 * beta + 1)) - beta
            let (w1, w0) = Self.referenceDecompose(w)
            guard abs(w0 - cs2) < Self.gamma2 - beta else { continue }  // the signer rejects otherwise
            // c·t0 is below γ2 in magnitude; a third of the cases put w0 − c·s2 + c·t0 right at
            // ±γ2, where the hint flips.
            let ct0: Int64
            switch rng.next() % 3 {
            case 0: ct0 = Int64(rng.next() % UInt64(2 * Self.gamma2 - 1)) - Self.gamma2 + 1
            case 1: ct0 = (rng.next() % 2 == 0 ? -Self.gamma2 : Self.gamma2) - (w0 - cs2) + Int64(rng.next() % 3) - 1
            default: ct0 = Int64(rng.next() % 2000) - 1000
            }
            guard abs(ct0) < Self.gamma2 else { continue }
            checked += 1
            let r = ((w - cs2) % Self.q + Self.q) % Self.q
            let rPlus = ((r + ct0) % Self.q + Self.q) % Self.q
            let expected: Int32 = Self.referenceDecompose(r).0 != Self.referenceDecompose(rPlus).0 ? 1 : 0
            let hint = MLDSAField.makeHint(low: Int32(w0 - cs2 + ct0), high: Int32(w1))
            #expect(hint == expected, "w \(w) cs2 \(cs2) ct0 \(ct0)")
            ones += Int(hint)
        }
        #expect(ones > 1000)  // the edges were exercised
    }

    @Test func bitPackingRoundTrips() {
        var rng = SplitMix64(seed: 4)
        for width in [4, 10, 13, 20] {
            let values = (0..<256).map { _ in Int32(rng.next() % (1 << UInt64(width))) }
            var bytes = [UInt8](repeating: 0, count: 32 * width)
            var back = [Int32](repeating: 0, count: 256)
            MLDSAEncoding.packBits(values, width: width, into: &bytes)
            MLDSAEncoding.unpackBits(bytes, width: width, into: &back)
            #expect(back == values, "width \(width)")
            // Least-significant bit first: the first value's low 8 bits are the first byte.
            #expect(bytes[0] == UInt8(truncatingIfNeeded: values[0]))
        }
        // z: (−γ1, γ1] through the dedicated 20-bit codec, which must agree with BitPack.
        let gamma1 = MLDSA65Parameters.gamma1
        var z = (0..<256).map { _ in Int32(rng.next() % UInt64(2 * gamma1)) - gamma1 + 1 }
        z[0] = gamma1
        z[1] = -gamma1 + 1
        var packed = [UInt8](repeating: 0, count: 640), generic = packed
        MLDSAEncoding.packZ(z, into: &packed)
        MLDSAEncoding.packBits(z.map { gamma1 - $0 }, width: 20, into: &generic)
        #expect(packed == generic)
        var unpacked = [Int32](repeating: 0, count: 256)
        MLDSAEncoding.unpackZ(packed, into: &unpacked)
        #expect(unpacked == z)
        // t0: (−2^12, 2^12]
        let t0 = (0..<256).map { _ in Int32(rng.next() % 8192) - 4095 }
        var t0Bytes = [UInt8](repeating: 0, count: 416)
        var t0Back = [Int32](repeating: 0, count: 256)
        MLDSAEncoding.packT0(t0, into: &t0Bytes)
        var t0Generic = [UInt8](repeating: 0, count: 416)
        MLDSAEncoding.packBits(t0.map { 4096 - $0 }, width: 13, into: &t0Generic)
        #expect(t0Bytes == t0Generic)
        MLDSAEncoding.unpackT0(t0Bytes, into: &t0Back)
        #expect(t0Back == t0)
        // t1: 10 bits through the dedicated codec, which must agree with SimpleBitPack.
        var t1 = (0..<256).map { _ in Int32(rng.next() % 1024) }
        t1[0] = 1023
        t1[255] = 1023
        var t1Bytes = [UInt8](repeating: 0, count: 320), t1Generic = t1Bytes
        MLDSAEncoding.packT1(t1, into: &t1Bytes)
        MLDSAEncoding.packBits(t1, width: 10, into: &t1Generic)
        #expect(t1Bytes == t1Generic)
        var t1Back = [Int32](repeating: 0, count: 256)
        MLDSAEncoding.unpackT1(t1Bytes, into: &t1Back)
        #expect(t1Back == t1)
    }

    @Test func etaUnpackingRejectsOutOfRangeNibbles() {
        var rng = SplitMix64(seed: 5)
        let s = (0..<256).map { _ in Int32(rng.next() % 9) - 4 }
        var bytes = [UInt8](repeating: 0, count: 128)
        var back = [Int32](repeating: 0, count: 256)
        MLDSAEncoding.packEta(s, into: &bytes)
        #expect(MLDSAEncoding.unpackEta(bytes, into: &back) == 0)
        #expect(back == s)
        for nibble: UInt8 in 9...15 {
            for highHalf in [false, true] {
                var bad = bytes
                let index = Int(rng.next() % 128)
                bad[index] = highHalf ? (bad[index] & 0x0F) | (nibble << 4) : (bad[index] & 0xF0) | nibble
                #expect(MLDSAEncoding.unpackEta(bad, into: &back) == -1, "nibble \(nibble)")
            }
        }
    }

    /// HintBitUnpack (Algorithm 21) accepts exactly the canonical encodings.
    @Test func hintUnpackingIsStrict() {
        let omega = MLDSA65Parameters.omega
        var h = [Int32](repeating: 0, count: 6 * 256)
        for (row, position) in [(0, 3), (0, 200), (2, 0), (2, 255), (5, 17)] { h[row * 256 + position] = 1 }
        var encoded = [UInt8](repeating: 0, count: omega + 6)
        MLDSAEncoding.packHint(h, into: &encoded)
        #expect(Array(encoded[omega...]) == [2, 2, 4, 4, 4, 5])
        var decoded = [Int32](repeating: 7, count: 6 * 256)
        #expect(MLDSAEncoding.unpackHint(encoded, into: &decoded))
        #expect(decoded == h)

        func rejects(_ change: (inout [UInt8]) -> Void, _ label: String) {
            var bad = encoded
            change(&bad)
            var scratch = [Int32](repeating: 0, count: 6 * 256)
            #expect(!MLDSAEncoding.unpackHint(bad, into: &scratch), "\(label)")
        }
        rejects({ $0[omega + 1] = 1 }, "count below the previous count")
        rejects({ $0[omega + 5] = UInt8(omega + 1) }, "count above ω")
        rejects({ $0[1] = 3 }, "repeated position")
        rejects({ $0[0] = 201 }, "positions out of order")
        rejects({ $0[omega - 1] = 1 }, "nonzero padding")
        // A full hint (ω ones) is still valid.
        var full = [Int32](repeating: 0, count: 6 * 256)
        for i in 0..<omega { full[i] = 1 }
        MLDSAEncoding.packHint(full, into: &encoded)
        #expect(MLDSAEncoding.unpackHint(encoded, into: &decoded) && decoded == full)
    }
}
