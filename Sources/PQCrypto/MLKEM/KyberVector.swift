// Eight Int16 coefficients at a time for the ML-KEM NTT. The element-wise multiply-high below
// compiles to a single SSE2/NEON instruction (pmulhw / sqdmulh-class), which is what makes a
// vectorized Montgomery product possible without platform intrinsics.

@usableFromInline typealias KyberVector = SIMD8<Int16>

extension SIMD8 where Scalar == Int16 {
    /// The high 16 bits of each 32-bit product.
    @inlinable @inline(__always)
    func multipliedHigh(_ other: SIMD8<Int16>) -> SIMD8<Int16> {
        var result = SIMD8<Int16>()
        for i in 0..<8 { result[i] = Int16(truncatingIfNeeded: (Int32(self[i]) &* Int32(other[i])) &>> 16) }
        return result
    }

    /// Montgomery product self·b·R^-1 mod q in (-q, q); `bQInverse` is b·q^-1 mod 2^16.
    /// Identical, lane by lane, to ``kyberMultiply(_:_:)``.
    @inlinable @inline(__always)
    func montgomeryMultiplied(by b: SIMD8<Int16>, _ bQInverse: SIMD8<Int16>) -> SIMD8<Int16> {
        let t = self &* bQInverse
        return multipliedHigh(b) &- t.multipliedHigh(SIMD8(repeating: kyberQ))
    }

    /// Centred Barrett reduction; identical, lane by lane, to ``kyberBarrettReduce(_:)``.
    @inlinable @inline(__always)
    func barrettReduced() -> SIMD8<Int16> {
        // (a·v + 2^25) >> 26 == ((a·v >> 16) + 2^9) >> 10.
        let t = (multipliedHigh(SIMD8(repeating: 20159)) &+ 512) &>> 10
        return self &- t &* kyberQ
    }

    @inlinable @inline(__always)
    static func load(_ pointer: UnsafePointer<Int16>) -> SIMD8<Int16> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Int16>.self)
    }

    @inlinable @inline(__always)
    func store(_ pointer: UnsafeMutablePointer<Int16>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: self, as: SIMD8<Int16>.self)
    }

    /// Reinterprets the lanes as two 64-bit halves (four coefficients each).
    @inlinable @inline(__always)
    var quads: SIMD2<UInt64> { unsafeBitCast(self, to: SIMD2<UInt64>.self) }

    /// Reinterprets the lanes as four 32-bit pairs (two coefficients each).
    @inlinable @inline(__always)
    var pairs: SIMD4<UInt32> { unsafeBitCast(self, to: SIMD4<UInt32>.self) }

    @inlinable @inline(__always)
    init(quads: SIMD2<UInt64>) { self = unsafeBitCast(quads, to: SIMD8<Int16>.self) }

    @inlinable @inline(__always)
    init(pairs: SIMD4<UInt32>) { self = unsafeBitCast(pairs, to: SIMD8<Int16>.self) }
}

/// ζ·q^-1 mod 2^16 for a twiddle ζ, the companion operand of a vector Montgomery product.
@inlinable @inline(__always)
func kyberQInverseMultiple(_ zeta: Int16) -> Int16 {
    zeta &* kyberQInverse
}

/// One Cooley–Tukey butterfly on vectors: (a + ζb, a − ζb).
@inlinable @inline(__always)
func kyberButterfly(_ a: inout KyberVector, _ b: inout KyberVector, _ zeta: KyberVector, _ zetaQInverse: KyberVector) {
    let t = b.montgomeryMultiplied(by: zeta, zetaQInverse)
    b = a &- t
    a = a &+ t
}

/// One Gentleman–Sande butterfly on vectors: (reduce(a + b), ζ(b − a)).
@inlinable @inline(__always)
func kyberInverseButterfly(_ a: inout KyberVector, _ b: inout KyberVector, _ zeta: KyberVector, _ zetaQInverse: KyberVector) {
    let t = a
    a = (t &+ b).barrettReduced()
    b = (b &- t).montgomeryMultiplied(by: zeta, zetaQInverse)
}
