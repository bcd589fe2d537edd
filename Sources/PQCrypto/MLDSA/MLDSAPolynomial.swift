// Operations on polynomials and vectors of polynomials in R_q = Z_q[X]/(X^256 + 1).
//
// A polynomial is 256 coefficients behind a pointer (Int32 outside the NTT domain, Double inside
// it); a vector of m polynomials is 256·m consecutive coefficients. The loops use wrapping
// arithmetic and raw pointers so that release builds carry no overflow or bounds checks.

enum MLDSAPolynomial {
    static let n = MLDSA65Parameters.n

    /// â_i = NTT(a_i) for `count` consecutive polynomials (|a| < q; |â| < 6q).
    @inline(__always)
    static func forwardNTT(_ a: UnsafePointer<Int32>, into result: UnsafeMutablePointer<Double>, count: Int) {
        for i in 0..<count { MLDSANTT.forward(a + i &* n, into: result + i &* n) }
    }

    /// a_i = NTT^-1(â_i) for `count` consecutive reduced polynomials; â is overwritten.
    @inline(__always)
    static func inverseNTT(_ a: UnsafeMutablePointer<Double>, into result: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<count { MLDSANTT.inverse(a + i &* n, into: result + i &* n) }
    }

    /// Reduces `count` NTT-domain polynomials in place (to |x| ≤ (q+1)/2).
    @inline(__always)
    static func reduce(_ a: UnsafeMutablePointer<Double>, count: Int) {
        for i in 0..<(count &* n) { a[i] = MLDSAField.reduce(a[i]) }
    }

    /// result_i = c ∘ v_i mod q, reduced, for each of the `count` polynomials of v
    /// (|c| < 6q, v reduced).
    @inline(__always)
    static func scaleVector(
        _ result: UnsafeMutablePointer<Double>, challenge c: UnsafeMutablePointer<Double>,
        _ v: UnsafeMutablePointer<Double>, count: Int
    ) {
        for row in 0..<count {
            let out = result + row &* n
            let b = v + row &* n
            for i in 0..<n { out[i] = MLDSAField.multiply(c[i], b[i]) }
        }
    }

    /// w = Â·v mod q in the NTT domain, reduced, for reduced Â in row-major order (k rows of l
    /// polynomials) and |v| < 6q. Each output coefficient is one reduction of the exact sum of its
    /// l products (below 2^51).
    @inline(__always)
    static func matrixTimesVector(
        _ w: UnsafeMutablePointer<Double>, matrix: UnsafeMutablePointer<Double>, _ v: UnsafeMutablePointer<Double>
    ) {
        let l = MLDSA65Parameters.l
        for row in 0..<MLDSA65Parameters.k {
            let a = matrix + row &* l &* n
            let out = w + row &* n
            let (a1, a2, a3, a4) = (a + n, a + 2 &* n, a + 3 &* n, a + 4 &* n)
            let (v1, v2, v3, v4) = (v + n, v + 2 &* n, v + 3 &* n, v + 4 &* n)
            for i in 0..<n {
                var sum = a[i] * v[i]
                sum += a1[i] * v1[i]
                sum += a2[i] * v2[i]
                sum += a3[i] * v3[i]
                sum += a4[i] * v4[i]
                out[i] = MLDSAField.reduce(sum)
            }
        }
    }

    /// w = Â·z − ĉ·t̂ mod q in the NTT domain, reduced: the verifier's A·z − c·t1·2^d before the
    /// inverse NTT (|z|, |c| < 6q; Â and t̂ reduced; the exact sums stay below 2^51).
    @inline(__always)
    static func matrixTimesVectorMinusScaled(
        _ w: UnsafeMutablePointer<Double>, matrix: UnsafeMutablePointer<Double>, _ z: UnsafeMutablePointer<Double>,
        challenge c: UnsafeMutablePointer<Double>, _ t: UnsafeMutablePointer<Double>
    ) {
        let l = MLDSA65Parameters.l
        for row in 0..<MLDSA65Parameters.k {
            let a = matrix + row &* l &* n
            let tRow = t + row &* n
            let out = w + row &* n
            let (a1, a2, a3, a4) = (a + n, a + 2 &* n, a + 3 &* n, a + 4 &* n)
            let (z1, z2, z3, z4) = (z + n, z + 2 &* n, z + 3 &* n, z + 4 &* n)
            for i in 0..<n {
                var sum = a[i] * z[i]
                sum += a1[i] * z1[i]
                sum += a2[i] * z2[i]
                sum += a3[i] * z3[i]
                sum += a4[i] * z4[i]
                sum -= c[i] * tRow[i]
                out[i] = MLDSAField.reduce(sum)
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
