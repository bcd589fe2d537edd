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
    @inline(__always)
    static func matrixTimesVector(
        _ w: UnsafeMutablePointer<UInt32>, matrix: UnsafeMutablePointer<UInt32>, _ v: UnsafeMutablePointer<UInt32>
    ) {
        let l = MLDSA65Parameters.l
        for row in 0..<MLDSA65Parameters.k {
            let a = matrix + row &* l &* n
            let out = w + row &* n
            let (a1, a2, a3, a4) = (a + n, a + 2 &* n, a + 3 &* n, a + 4 &* n)
            let (v1, v2, v3, v4) = (v + n, v + 2 &* n, v + 3 &* n, v + 4 &* n)
            for i in 0..<n {
                var sum = UInt64(a[i]) &* UInt64(v[i])
                sum &+= UInt64(a1[i]) &* UInt64(v1[i])
                sum &+= UInt64(a2[i]) &* UInt64(v2[i])
                sum &+= UInt64(a3[i]) &* UInt64(v3[i])
                sum &+= UInt64(a4[i]) &* UInt64(v4[i])
                out[i] = MLDSAField.montgomeryReduce(sum)
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
