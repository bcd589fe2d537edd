// Operations on polynomials and vectors of polynomials in R_q = Z_q[X]/(X^256 + 1).
//
// A polynomial is 256 coefficients behind a pointer (Int32 outside the NTT domain, UInt32
// inside it); a vector of m polynomials is 256·m consecutive coefficients. The loops use wrapping
// arithmetic and raw pointers so that release builds carry no overflow or bounds checks.

enum MLDSAPolynomial {
    static let n = MLDSA65Parameters.n

    /// â_i = NTT(a_i) for `count` consecutive polynomials (|a| < q; â in [0, 18q)).
    @inline(__always)
    static func forwardNTT(_ a: UnsafePointer<Int32>, into result: UnsafeMutablePointer<UInt32>, count: Int) {
        for i in 0..<count { MLDSANTT.forward(a + i &* n, into: result + i &* n) }
    }

    /// a_i = NTT^-1(â_i)·2^32 for `count` consecutive polynomials in [0, 2q); â is overwritten.
    @inline(__always)
    static func inverseNTT(_ a: UnsafeMutablePointer<UInt32>, into result: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<count { MLDSANTT.inverse(a + i &* n, into: result + i &* n) }
    }

    /// Reduces `count` NTT-domain polynomials in place to [0, q).
    @inline(__always)
    static func reduce(_ a: UnsafeMutablePointer<UInt32>, count: Int) {
        for i in 0..<(count &* n) { a[i] = MLDSAField.canonical(a[i]) }
    }

    /// w = Â·v·2^-32 mod q in the NTT domain, in [0, 2q), for Â in [0, q) in row-major order (k rows
    /// of l polynomials) and v in [0, 18q). Each output coefficient is one reduction of the exact
    /// sum of its l products (below 90q² < 2^32·q).
    ///
    /// Â is in the matrix layout: a UInt64 per coefficient, each group of four coefficients in the
    /// order 0, 2, 1, 3. A group of v loaded as four UInt32 is, as two UInt64, coefficients 0 and
    /// 2 in the low halves and 1 and 3 in the high ones, which is what the zero-extended 32×32→64
    /// products (SSE2 `pmuludq`, NEON `umull`) take; the matching halves of Â are the two aligned
    /// 16-byte words of the group, read straight from memory. No shuffles, except one shift.
    @inline(__always)
    static func matrixTimesVector(
        _ w: UnsafeMutablePointer<UInt32>, matrix: UnsafeMutablePointer<UInt64>, _ v: UnsafeMutablePointer<UInt32>
    ) {
        typealias W = SIMD2<UInt64>
        let l = MLDSA65Parameters.l
        let low = W(repeating: 0xFFFF_FFFF)
        let qInverse = W(repeating: UInt64(MLDSAField.negativeQInverse))
        let q = W(repeating: UInt64(MLDSAField.qUnsigned))
        let vBytes = UnsafeRawPointer(v)
        for row in 0..<MLDSA65Parameters.k {
            let a = UnsafeRawPointer(matrix + row &* l &* n)
            let out = UnsafeMutableRawPointer(w + row &* n)
            var g = 0
            while g < n {
                var even = W(), odd = W()
                for s in 0..<l {
                    let x = unsafeBitCast(
                        vBytes.loadUnaligned(fromByteOffset: (s &* n &+ g) &* 4, as: SIMD4<UInt32>.self), to: W.self)
                    let aEven = a.load(fromByteOffset: (s &* n &+ g) &* 8, as: W.self)
                    let aOdd = a.load(fromByteOffset: (s &* n &+ g) &* 8 &+ 16, as: W.self)
                    even &+= (x & low) &* (aEven & low)
                    odd &+= (x &>> 32) &* (aOdd & low)
                }
                // Montgomery reduction of the four sums (MLDSAField.montgomeryReduce).
                let mEven = ((even & low) &* qInverse) & low
                let mOdd = ((odd & low) &* qInverse) & low
                let result = ((even &+ mEven &* q) &>> 32) | ((odd &+ mOdd &* q) & ~low)
                out.storeBytes(of: unsafeBitCast(result, to: SIMD4<UInt32>.self), toByteOffset: g &* 4,
                               as: SIMD4<UInt32>.self)
                g &+= 4
            }
        }
    }

    /// All-ones when some coefficient of the `count` polynomials, already centered, has magnitude
    /// ≥ bound, else zero. Scans every coefficient (no early exit, no branches).
    @inline(__always)
    static func exceedsMask(_ a: UnsafePointer<Int32>, count: Int, bound: Int32) -> Int32 {
        var mask: Int32 = 0
        for i in 0..<(count &* n) {
            mask |= MLDSAField.exceedsMask(a[i], bound)
        }
        return mask
    }
}
