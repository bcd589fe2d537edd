// Products of the challenge c (τ = 49 coefficients ±1, the rest 0) with the signer's short
// vectors s1, s2 and t0, computed exactly in the normal domain instead of through the NTT.
//
// c·v is the sum over c's nonzero positions j of ±X^j·v, and X^j·v in Z[X]/(X^256 + 1) is a
// window of v's "extended" form: ext[k] = −v[k] and ext[256 + k] = v[k] for k in 0..<256, so that
// coefficient i of X^j·v is ext[256 − j + i]. One product is then 49 shifted reads of 256
// contiguous coefficients, added or subtracted lane by lane, with no multiplication and no
// reduction: |c·s1|, |c·s2| ≤ τ·η = 196 fit Int16 (eight lanes per SSE2/NEON register) and
// |c·t0| ≤ τ·2^12 fits Int32. The signer's checks and hints use these exact values directly.
// The keys hold the extended forms in several shifted copies so that every read is aligned
// (see extendAligned), which x86-64 folds into the additions.
//
// The positions of c steer which addresses are read, as they do in the reference
// implementations' SampleInBall (see MLDSASampling.sampleInBall); the secret values only flow
// through additions, so nothing depends on them.

enum MLDSAChallenge {
    static let n = MLDSA65Parameters.n
    /// Elements of one extended polynomial.
    static let extendedCount = 2 * MLDSA65Parameters.n

    /// Entries of the offsets buffer that ``offsets(of:into:)`` fills.
    static let offsetCapacity = 2 * (MLDSA65Parameters.n + 1)

    /// Writes the window offsets 256 − j of c's nonzero positions j: those with coefficient +1
    /// from `offsets[0]` on, those with −1 from `offsets[n + 1]` on (the buffer holds
    /// ``offsetCapacity`` entries). Returns both counts. Branch-free: every position writes both
    /// lists and only the counts advance, so no mispredicted branch per coefficient.
    @inline(__always)
    static func offsets(of c: UnsafePointer<Int32>, into offsets: UnsafeMutablePointer<Int>) -> (plus: Int, minus: Int) {
        var counts = (plus: 0, minus: 0)
        for j in 0..<n { record(j, c[j], into: offsets, counts: &counts) }  // c[j] is −1, 0 or 1
        return counts
    }

    /// ``offsets(of:into:)`` from the list of c's `count` nonzero positions (which the signer's
    /// SampleInBall keeps), reading only those coefficients.
    @inline(__always)
    static func offsets(
        of c: UnsafePointer<Int32>, positions: UnsafePointer<Int>, count: Int, into offsets: UnsafeMutablePointer<Int>
    ) -> (plus: Int, minus: Int) {
        var counts = (plus: 0, minus: 0)
        for k in 0..<count {
            let j = positions[k]
            record(j, c[j], into: offsets, counts: &counts)  // c[j] is −1 or 1
        }
        return counts
    }

    /// Writes position `j`'s offset at the end of both lists and advances the count of the list
    /// its coefficient `value` (−1, 0 or 1) belongs to, without branching on `value`.
    @inline(__always)
    private static func record(_ j: Int, _ value: Int32, into offsets: UnsafeMutablePointer<Int>, counts: inout (plus: Int, minus: Int)) {
        offsets[counts.plus] = n &- j
        offsets[n &+ 1 &+ counts.minus] = n &- j
        counts.plus &+= Int((0 &- value) &>> 31) & 1
        counts.minus &+= Int(value &>> 31) & 1
    }

    /// Writes the extended form of `count` polynomials, whose coefficients fit `T`.
    @inline(__always)
    static func extend<T: FixedWidthInteger & SignedInteger>(
        _ v: UnsafePointer<Int32>, count: Int, into ext: UnsafeMutablePointer<T>
    ) {
        for p in 0..<count {
            let source = v + p &* n, target = ext + p &* extendedCount
            for i in 0..<n {
                let value = T(truncatingIfNeeded: source[i])
                target[i] = 0 &- value
                target[i &+ n] = value
            }
        }
    }

    // MARK: Aligned windows

    /// Copies of each extended polynomial in the aligned form: one per window offset modulo the
    /// coefficients in 16 bytes (eight Int16, four Int32).
    @inline(__always)
    static func alignedCopies<T>(of _: T.Type) -> Int { 16 / MemoryLayout<T>.size }

    /// Entries of a list that ``alignedOffsets(_:counts:polynomials:of:into:)`` fills.
    static let alignedOffsetCapacity = MLDSA65Parameters.n

    /// Elements of the aligned extended form of `polynomials` polynomials of `T`.
    @inline(__always)
    static func alignedCount<T>(polynomials: Int, of type: T.Type) -> Int {
        alignedCopies(of: type) &* polynomials &* extendedCount
    }

    /// Writes the aligned extended form of `count` polynomials, whose coefficients fit `T`:
    /// copy r (r below ``alignedCopies(of:)``, m) of polynomial p, at
    /// `ext + (r·count + p)·extendedCount`, holds the extended form shifted down by r (entry i is
    /// ext_p[i + r], the last r entries zero). A window at offset w then starts at entry
    /// w − (w mod m) of copy w mod m, on a 16-byte boundary, so every read of the product is an
    /// aligned 16-byte load, which x86-64 folds into the addition (an unaligned one takes an
    /// instruction of its own).
    @inline(__always)
    static func extendAligned<T: FixedWidthInteger & SignedInteger>(
        _ v: UnsafePointer<Int32>, count: Int, into ext: UnsafeMutablePointer<T>
    ) {
        extend(v, count: count, into: ext)
        for r in 1..<alignedCopies(of: T.self) {
            let copy = ext + r &* count &* extendedCount
            for p in 0..<count {
                let source = ext + p &* extendedCount, target = copy + p &* extendedCount
                target.update(from: source + r, count: extendedCount &- r)
                (target + (extendedCount &- r)).update(repeating: 0, count: r)
            }
        }
    }

    /// The byte offsets, from the start of an aligned extended buffer of `polynomials`
    /// polynomials of `T` (see ``extendAligned(_:count:into:)``), of the windows that
    /// ``offsets(of:into:)`` listed: the +1 list, then the −1 list right after it (at most
    /// ``alignedOffsetCapacity`` entries in all).
    @inline(__always)
    static func alignedOffsets<T>(
        _ offsets: UnsafePointer<Int>, counts: (plus: Int, minus: Int), polynomials: Int, of _: T.Type,
        into aligned: UnsafeMutablePointer<Int>
    ) {
        let size = MemoryLayout<T>.size
        let copies = alignedCopies(of: T.self)
        let copyBytes = polynomials &* extendedCount &* size
        @inline(__always) func byteOffset(_ w: Int) -> Int {
            let r = w & (copies &- 1)
            return r &* copyBytes &+ (w &- r) &* size
        }
        for k in 0..<counts.plus { aligned[k] = byteOffset(offsets[k]) }
        for k in 0..<counts.minus { aligned[counts.plus &+ k] = byteOffset(offsets[n &+ 1 &+ k]) }
    }

    /// out_p = c·v_p for polynomials `first..<(first + count)` of an aligned extended buffer of
    /// Int16 whose products fit Int16 (|c·s1|, |c·s2| ≤ 196 and |c·(t1 − 512)| ≤ 25088), with
    /// `aligned` from ``alignedOffsets(_:counts:polynomials:of:into:)``. The Int32 overload, for
    /// |c·t0| ≤ 49·2^12, is the same code on four lanes per register. (Two concrete functions, not
    /// one generic: unspecialized generic SIMD code makes debug builds' signing several times
    /// slower.)
    @inline(__always)
    static func multiply(
        _ ext: UnsafePointer<Int16>, first: Int, count: Int, aligned: UnsafePointer<Int>,
        counts: (plus: Int, minus: Int), into out: UnsafeMutablePointer<Int16>
    ) {
        let minusList = aligned + counts.plus
        let size = MemoryLayout<Int16>.size
        for p in 0..<count {
            let source = UnsafeRawPointer(ext + (first &+ p) &* extendedCount)
            let target = UnsafeMutableRawPointer(out + p &* n)
            // 256 bytes of coefficients (sixteen registers, all of SSE2's) at a time, each summed
            // over all of c's positions: the window reads are memory operands of the additions,
            // so no register is needed for them.
            var chunk = 0
            while chunk < n &* size {
                var a0 = SIMD8<Int16>(), a1 = SIMD8<Int16>(), a2 = SIMD8<Int16>(), a3 = SIMD8<Int16>(), a4 = SIMD8<Int16>(), a5 = SIMD8<Int16>(), a6 = SIMD8<Int16>(), a7 = SIMD8<Int16>()
                var a8 = SIMD8<Int16>(), a9 = SIMD8<Int16>(), a10 = SIMD8<Int16>(), a11 = SIMD8<Int16>(), a12 = SIMD8<Int16>(), a13 = SIMD8<Int16>(), a14 = SIMD8<Int16>(), a15 = SIMD8<Int16>()
                let base = source + chunk
                var k: Int
                k = 0
                while k < counts.plus {
                    let s = base + aligned[k]
                    a0 &+= s.load(fromByteOffset: 0, as: SIMD8<Int16>.self)
                    a1 &+= s.load(fromByteOffset: 16, as: SIMD8<Int16>.self)
                    a2 &+= s.load(fromByteOffset: 32, as: SIMD8<Int16>.self)
                    a3 &+= s.load(fromByteOffset: 48, as: SIMD8<Int16>.self)
                    a4 &+= s.load(fromByteOffset: 64, as: SIMD8<Int16>.self)
                    a5 &+= s.load(fromByteOffset: 80, as: SIMD8<Int16>.self)
                    a6 &+= s.load(fromByteOffset: 96, as: SIMD8<Int16>.self)
                    a7 &+= s.load(fromByteOffset: 112, as: SIMD8<Int16>.self)
                    a8 &+= s.load(fromByteOffset: 128, as: SIMD8<Int16>.self)
                    a9 &+= s.load(fromByteOffset: 144, as: SIMD8<Int16>.self)
                    a10 &+= s.load(fromByteOffset: 160, as: SIMD8<Int16>.self)
                    a11 &+= s.load(fromByteOffset: 176, as: SIMD8<Int16>.self)
                    a12 &+= s.load(fromByteOffset: 192, as: SIMD8<Int16>.self)
                    a13 &+= s.load(fromByteOffset: 208, as: SIMD8<Int16>.self)
                    a14 &+= s.load(fromByteOffset: 224, as: SIMD8<Int16>.self)
                    a15 &+= s.load(fromByteOffset: 240, as: SIMD8<Int16>.self)
                    k &+= 1
                }
                k = 0
                while k < counts.minus {
                    let s = base + minusList[k]
                    a0 &-= s.load(fromByteOffset: 0, as: SIMD8<Int16>.self)
                    a1 &-= s.load(fromByteOffset: 16, as: SIMD8<Int16>.self)
                    a2 &-= s.load(fromByteOffset: 32, as: SIMD8<Int16>.self)
                    a3 &-= s.load(fromByteOffset: 48, as: SIMD8<Int16>.self)
                    a4 &-= s.load(fromByteOffset: 64, as: SIMD8<Int16>.self)
                    a5 &-= s.load(fromByteOffset: 80, as: SIMD8<Int16>.self)
                    a6 &-= s.load(fromByteOffset: 96, as: SIMD8<Int16>.self)
                    a7 &-= s.load(fromByteOffset: 112, as: SIMD8<Int16>.self)
                    a8 &-= s.load(fromByteOffset: 128, as: SIMD8<Int16>.self)
                    a9 &-= s.load(fromByteOffset: 144, as: SIMD8<Int16>.self)
                    a10 &-= s.load(fromByteOffset: 160, as: SIMD8<Int16>.self)
                    a11 &-= s.load(fromByteOffset: 176, as: SIMD8<Int16>.self)
                    a12 &-= s.load(fromByteOffset: 192, as: SIMD8<Int16>.self)
                    a13 &-= s.load(fromByteOffset: 208, as: SIMD8<Int16>.self)
                    a14 &-= s.load(fromByteOffset: 224, as: SIMD8<Int16>.self)
                    a15 &-= s.load(fromByteOffset: 240, as: SIMD8<Int16>.self)
                    k &+= 1
                }
                let t = target + chunk
                t.storeBytes(of: a0, toByteOffset: 0, as: SIMD8<Int16>.self)
                t.storeBytes(of: a1, toByteOffset: 16, as: SIMD8<Int16>.self)
                t.storeBytes(of: a2, toByteOffset: 32, as: SIMD8<Int16>.self)
                t.storeBytes(of: a3, toByteOffset: 48, as: SIMD8<Int16>.self)
                t.storeBytes(of: a4, toByteOffset: 64, as: SIMD8<Int16>.self)
                t.storeBytes(of: a5, toByteOffset: 80, as: SIMD8<Int16>.self)
                t.storeBytes(of: a6, toByteOffset: 96, as: SIMD8<Int16>.self)
                t.storeBytes(of: a7, toByteOffset: 112, as: SIMD8<Int16>.self)
                t.storeBytes(of: a8, toByteOffset: 128, as: SIMD8<Int16>.self)
                t.storeBytes(of: a9, toByteOffset: 144, as: SIMD8<Int16>.self)
                t.storeBytes(of: a10, toByteOffset: 160, as: SIMD8<Int16>.self)
                t.storeBytes(of: a11, toByteOffset: 176, as: SIMD8<Int16>.self)
                t.storeBytes(of: a12, toByteOffset: 192, as: SIMD8<Int16>.self)
                t.storeBytes(of: a13, toByteOffset: 208, as: SIMD8<Int16>.self)
                t.storeBytes(of: a14, toByteOffset: 224, as: SIMD8<Int16>.self)
                t.storeBytes(of: a15, toByteOffset: 240, as: SIMD8<Int16>.self)
                chunk &+= 256
            }
        }
    }


    /// The Int32 form of ``multiply(_:first:count:aligned:counts:into:)`` (|c·t0| ≤ 49·2^12).
    @inline(__always)
    static func multiply(
        _ ext: UnsafePointer<Int32>, first: Int, count: Int, aligned: UnsafePointer<Int>,
        counts: (plus: Int, minus: Int), into out: UnsafeMutablePointer<Int32>
    ) {
        let minusList = aligned + counts.plus
        let size = MemoryLayout<Int32>.size
        for p in 0..<count {
            let source = UnsafeRawPointer(ext + (first &+ p) &* extendedCount)
            let target = UnsafeMutableRawPointer(out + p &* n)
            // 256 bytes of coefficients (sixteen registers, all of SSE2's) at a time, each summed
            // over all of c's positions: the window reads are memory operands of the additions,
            // so no register is needed for them.
            var chunk = 0
            while chunk < n &* size {
                var a0 = SIMD4<Int32>(), a1 = SIMD4<Int32>(), a2 = SIMD4<Int32>(), a3 = SIMD4<Int32>(), a4 = SIMD4<Int32>(), a5 = SIMD4<Int32>(), a6 = SIMD4<Int32>(), a7 = SIMD4<Int32>()
                var a8 = SIMD4<Int32>(), a9 = SIMD4<Int32>(), a10 = SIMD4<Int32>(), a11 = SIMD4<Int32>(), a12 = SIMD4<Int32>(), a13 = SIMD4<Int32>(), a14 = SIMD4<Int32>(), a15 = SIMD4<Int32>()
                let base = source + chunk
                var k: Int
                k = 0
                while k < counts.plus {
                    let s = base + aligned[k]
                    a0 &+= s.load(fromByteOffset: 0, as: SIMD4<Int32>.self)
                    a1 &+= s.load(fromByteOffset: 16, as: SIMD4<Int32>.self)
                    a2 &+= s.load(fromByteOffset: 32, as: SIMD4<Int32>.self)
                    a3 &+= s.load(fromByteOffset: 48, as: SIMD4<Int32>.self)
                    a4 &+= s.load(fromByteOffset: 64, as: SIMD4<Int32>.self)
                    a5 &+= s.load(fromByteOffset: 80, as: SIMD4<Int32>.self)
                    a6 &+= s.load(fromByteOffset: 96, as: SIMD4<Int32>.self)
                    a7 &+= s.load(fromByteOffset: 112, as: SIMD4<Int32>.self)
                    a8 &+= s.load(fromByteOffset: 128, as: SIMD4<Int32>.self)
                    a9 &+= s.load(fromByteOffset: 144, as: SIMD4<Int32>.self)
                    a10 &+= s.load(fromByteOffset: 160, as: SIMD4<Int32>.self)
                    a11 &+= s.load(fromByteOffset: 176, as: SIMD4<Int32>.self)
                    a12 &+= s.load(fromByteOffset: 192, as: SIMD4<Int32>.self)
                    a13 &+= s.load(fromByteOffset: 208, as: SIMD4<Int32>.self)
                    a14 &+= s.load(fromByteOffset: 224, as: SIMD4<Int32>.self)
                    a15 &+= s.load(fromByteOffset: 240, as: SIMD4<Int32>.self)
                    k &+= 1
                }
                k = 0
                while k < counts.minus {
                    let s = base + minusList[k]
                    a0 &-= s.load(fromByteOffset: 0, as: SIMD4<Int32>.self)
                    a1 &-= s.load(fromByteOffset: 16, as: SIMD4<Int32>.self)
                    a2 &-= s.load(fromByteOffset: 32, as: SIMD4<Int32>.self)
                    a3 &-= s.load(fromByteOffset: 48, as: SIMD4<Int32>.self)
                    a4 &-= s.load(fromByteOffset: 64, as: SIMD4<Int32>.self)
                    a5 &-= s.load(fromByteOffset: 80, as: SIMD4<Int32>.self)
                    a6 &-= s.load(fromByteOffset: 96, as: SIMD4<Int32>.self)
                    a7 &-= s.load(fromByteOffset: 112, as: SIMD4<Int32>.self)
                    a8 &-= s.load(fromByteOffset: 128, as: SIMD4<Int32>.self)
                    a9 &-= s.load(fromByteOffset: 144, as: SIMD4<Int32>.self)
                    a10 &-= s.load(fromByteOffset: 160, as: SIMD4<Int32>.self)
                    a11 &-= s.load(fromByteOffset: 176, as: SIMD4<Int32>.self)
                    a12 &-= s.load(fromByteOffset: 192, as: SIMD4<Int32>.self)
                    a13 &-= s.load(fromByteOffset: 208, as: SIMD4<Int32>.self)
                    a14 &-= s.load(fromByteOffset: 224, as: SIMD4<Int32>.self)
                    a15 &-= s.load(fromByteOffset: 240, as: SIMD4<Int32>.self)
                    k &+= 1
                }
                let t = target + chunk
                t.storeBytes(of: a0, toByteOffset: 0, as: SIMD4<Int32>.self)
                t.storeBytes(of: a1, toByteOffset: 16, as: SIMD4<Int32>.self)
                t.storeBytes(of: a2, toByteOffset: 32, as: SIMD4<Int32>.self)
                t.storeBytes(of: a3, toByteOffset: 48, as: SIMD4<Int32>.self)
                t.storeBytes(of: a4, toByteOffset: 64, as: SIMD4<Int32>.self)
                t.storeBytes(of: a5, toByteOffset: 80, as: SIMD4<Int32>.self)
                t.storeBytes(of: a6, toByteOffset: 96, as: SIMD4<Int32>.self)
                t.storeBytes(of: a7, toByteOffset: 112, as: SIMD4<Int32>.self)
                t.storeBytes(of: a8, toByteOffset: 128, as: SIMD4<Int32>.self)
                t.storeBytes(of: a9, toByteOffset: 144, as: SIMD4<Int32>.self)
                t.storeBytes(of: a10, toByteOffset: 160, as: SIMD4<Int32>.self)
                t.storeBytes(of: a11, toByteOffset: 176, as: SIMD4<Int32>.self)
                t.storeBytes(of: a12, toByteOffset: 192, as: SIMD4<Int32>.self)
                t.storeBytes(of: a13, toByteOffset: 208, as: SIMD4<Int32>.self)
                t.storeBytes(of: a14, toByteOffset: 224, as: SIMD4<Int32>.self)
                t.storeBytes(of: a15, toByteOffset: 240, as: SIMD4<Int32>.self)
                chunk &+= 256
            }
        }
    }

    /// out = c·(1 + X + … + X^255): coefficient i is (the sum of c_j for j ≤ i) − (the sum for
    /// j > i), since X^j·X^m is +X^(j+m) below X^256 and −X^(j+m−256) from there.
    @inline(__always)
    static func allOnesProduct(_ c: UnsafePointer<Int32>, into out: UnsafeMutablePointer<Int32>) {
        var total: Int32 = 0
        for j in 0..<n { total &+= c[j] }
        var prefix: Int32 = 0
        for i in 0..<n {
            prefix &+= c[i]
            out[i] = 2 &* prefix &- total
        }
    }
}
