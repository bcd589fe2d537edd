// Operations on polynomials and vectors of polynomials in R_q = Z_q[X]/(X^256 + 1).
//
// A polynomial is 256 Int32 coefficients behind an `UnsafeMutablePointer<Int32>`; a vector of m
// polynomials is 256·m consecutive coefficients. The loops use wrapping arithmetic and raw pointers
// so that release builds carry no overflow or bounds checks in the hot paths.

enum MLDSAPolynomial {
    static let n = MLDSA65Parameters.n

    /// Applies the forward NTT to `count` consecutive polynomials.
    @inline(__always)
    static func forwardNTT(_ a: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<count { MLDSANTT.forward(a + i &* n) }
    }

    /// Applies the inverse NTT (with the 2^32 factor) to `count` consecutive polynomials.
    @inline(__always)
    static func inverseNTT(_ a: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<count { MLDSANTT.inverse(a + i &* n) }
    }

    /// result = a ∘ b · 2^-32 coefficient-wise (NTT domain), for |a·b| ≤ 2^31·q.
    @inline(__always)
    static func pointwiseMontgomery(
        _ result: UnsafeMutablePointer<Int32>, _ a: UnsafePointer<Int32>, _ b: UnsafePointer<Int32>
    ) {
        for i in 0..<n {
            result[i] = MLDSAField.montgomeryReduce(Int64(a[i]) &* Int64(b[i]))
        }
    }

    /// result_i = c ∘ v_i · 2^-32 for each of the `count` polynomials of v.
    @inline(__always)
    static func scaleVector(
        _ result: UnsafeMutablePointer<Int32>, challenge c: UnsafePointer<Int32>,
        _ v: UnsafePointer<Int32>, count: Int
    ) {
        for i in 0..<count {
            pointwiseMontgomery(result + i &* n, c, v + i &* n)
        }
    }

    /// w = Â·v · 2^-32 in the NTT domain, for Â in row-major order (k rows of l polynomials) with
    /// coefficients in [0, q) and |v| < 9q. Each output coefficient is one Montgomery reduction of
    /// the 64-bit sum of its l products.
    @inline(__always)
    static func matrixTimesVector(
        _ w: UnsafeMutablePointer<Int32>, matrix: UnsafePointer<Int32>, _ v: UnsafePointer<Int32>
    ) {
        let l = MLDSA65Parameters.l
        for row in 0..<MLDSA65Parameters.k {
            let a = matrix + row &* l &* n
            let out = w + row &* n
            for i in 0..<n {
                var sum = Int64(a[i]) &* Int64(v[i])
                sum &+= Int64(a[n &+ i]) &* Int64(v[n &+ i])
                sum &+= Int64(a[2 &* n &+ i]) &* Int64(v[2 &* n &+ i])
                sum &+= Int64(a[3 &* n &+ i]) &* Int64(v[3 &* n &+ i])
                sum &+= Int64(a[4 &* n &+ i]) &* Int64(v[4 &* n &+ i])
                out[i] = MLDSAField.montgomeryReduce(sum)
            }
        }
    }

    /// w = (Â·z − ĉ·t̂) · 2^-32 in the NTT domain: the verifier's A·z − c·t1·2^d before the inverse NTT.
    @inline(__always)
    static func matrixTimesVectorMinusScaled(
        _ w: UnsafeMutablePointer<Int32>, matrix: UnsafePointer<Int32>, _ z: UnsafePointer<Int32>,
        challenge c: UnsafePointer<Int32>, _ t: UnsafePointer<Int32>
    ) {
        let l = MLDSA65Parameters.l
        for row in 0..<MLDSA65Parameters.k {
            let a = matrix + row &* l &* n
            let tRow = t + row &* n
            let out = w + row &* n
            for i in 0..<n {
                var sum = Int64(a[i]) &* Int64(z[i])
                sum &+= Int64(a[n &+ i]) &* Int64(z[n &+ i])
                sum &+= Int64(a[2 &* n &+ i]) &* Int64(z[2 &* n &+ i])
                sum &+= Int64(a[3 &* n &+ i]) &* Int64(z[3 &* n &+ i])
                sum &+= Int64(a[4 &* n &+ i]) &* Int64(z[4 &* n &+ i])
                sum &-= Int64(c[i]) &* Int64(tRow[i])
                out[i] = MLDSAField.montgomeryReduce(sum)
            }
        }
    }

    /// Maps every coefficient of `count` polynomials to a representative in [−6283008, 6283008].
    @inline(__always)
    static func reduce(_ a: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<(count &* n) { a[i] = MLDSAField.reduce32(a[i]) }
    }

    /// Maps every coefficient of `count` polynomials from (−q, q) to [0, q).
    @inline(__always)
    static func addQIfNegative(_ a: UnsafeMutablePointer<Int32>, count: Int) {
        for i in 0..<(count &* n) { a[i] = MLDSAField.addQIfNegative(a[i]) }
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
