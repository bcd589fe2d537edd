// The number-theoretic transform over Z_q[X]/(X^256 + 1) (FIPS 204 §7.5, Algorithms 41 and 42).
//
// The NTT domain is held in Double: every coefficient is an integer, and products of two bounded
// values (< 2^53) are exact in a Double's 53-bit significand, so modular multiplication is
// p − round(p/q)·q with exact results. The compiler vectorizes these loops for the SIMD units
// that every 64-bit CPU has (two Doubles per SSE2 or NEON register), which it cannot do well for
// 32×32→64-bit integer products on baseline x86-64. Floating-point add and multiply on integers
// take the same time for every value (no subnormals occur), so this is as constant-time as
// integer arithmetic. The loops are written on scalars, not SIMD types, because debug builds
// (`swift test`) run generic SIMD code dozens of times slower.
//
// Bounds ("reduced" means |x| ≤ (q+1)/2): the forward transform takes Int32 with |a| < q and
// returns |â| < 6q; the inverse takes reduced input and returns reduced Int32 output. The rounding
// constant assumes the default IEEE round-to-nearest mode.

enum MLDSANTT {
    static let n = MLDSA65Parameters.n

    /// ζ^BitRev8(k) mod q for ζ = 1753, centered in (−q/2, q/2]; entry 0 is unused.
    /// (Computed from the definition; `MLDSAArithmeticTests` recomputes and compares it.)
    static let zetas: [Double] = [
        1, -3572223, 3765607, 3761513, -3201494, -2883726, -3145678, -3201430,
        -601683, 3542485, 2682288, 2129892, 3764867, -1005239, 557458, -1221177,
        -3370349, -4063053, 2663378, -1674615, -3524442, -434125, 676590, -1335936,
        -3227876, 1714295, 2453983, 1460718, -642628, -3585098, 2815639, 2283733,
        3602218, 3182878, 2740543, -3586446, -3110818, 2101410, 3704823, 1159875,
        394148, 928749, 1095468, -3506380, 2071829, -4018989, 3241972, 2156050,
        3415069, 1759347, -817536, -3574466, 3756790, -1935799, -1716988, -3950053,
        -2897314, 3192354, 556856, 3870317, 2917338, 1853806, 3345963, 1858416,
        3073009, 1277625, -2635473, 3852015, 4183372, -3222807, -3121440, -274060,
        2508980, 2028118, 1937570, -3815725, 2811291, -2983781, -1109516, 4158088,
        1528066, 482649, 1148858, -2962264, -565603, 169688, 2462444, -3334383,
        -4166425, -3488383, 1987814, -3197248, 1736313, 235407, -3250154, 3258457,
        -2579253, 1787943, -2391089, -2254727, 3482206, -4182915, -1300016, -2362063,
        -1317678, 2461387, 3035980, 621164, 3901472, -1226661, 2925816, 3374250,
        1356448, -2775755, 2683270, -2778788, -3467665, 2312838, -653275, -459163,
        348812, -327848, 1011223, -2354215, -3818627, -1922253, -2236726, 1744507,
        1753, -1935420, -2659525, -1455890, 2660408, -1780227, -59148, 2772600,
        1182243, 87208, 636927, -3965306, -3956745, -2296397, -3284915, -3716946,
        -27812, 822541, 1009365, -2454145, -1979497, 1596822, -3956944, -3759465,
        -1685153, -3410568, 2678278, -3768948, -3551006, 635956, -250446, -2455377,
        -4146264, -1772588, 2192938, -1727088, 2387513, -3611750, -268456, -3180456,
        3747250, 2296099, 1239911, -3838479, 3195676, 2642980, 1254190, -12417,
        2998219, 141835, -89301, 2513018, -1354892, 613238, -1310261, -2218467,
        -458740, -1921994, 4040196, -3472069, 2039144, -1879878, -818761, -2178965,
        -1623354, 2105286, -2374402, -2033807, 586241, -1179613, 527981, -2743411,
        -1476985, 1994046, 2491325, -1393159, 507927, -1187885, -724804, -1834526,
        -3033742, -338420, 2647994, 3009748, -2612853, 4148469, 749577, -4022750,
        3980599, 2569011, -1615530, 1723229, 1665318, 2028038, 1163598, -3369273,
        3994671, -11879, -1370517, 3020393, 3363542, 214880, 545376, -770441,
        3105558, -1103344, 508145, -553718, 860144, 3430436, 140244, -1514152,
        -2185084, 3123762, 2358373, -2193087, -3014420, -1716814, 2926054, -392707,
        -303005, 3531229, -3974485, -3773731, 1900052, -781875, 1054478, -731434,
    ]

    /// 256^-1 mod q, centered: the scale of the inverse transform.
    static let inverseScale: Double = -32736

    // Both transforms run their eight layers as four radix-4 passes (two layers per pass), which
    // halves the loads and stores; each pass does exactly the butterflies of its two layers.

    /// â = NTT(a) (Algorithm 41, Cooley-Tukey butterflies, bit-reversed output order).
    @inline(__always)
    static func forward(_ input: UnsafePointer<Int32>, into a: UnsafeMutablePointer<Double>) {
        zetas.withUnsafeBufferPointer { table in
            guard let zeta = table.baseAddress else { return }
            // Layers of length 128 and 64, reading the Int32 input.
            let (z1, z2, z3) = (zeta[1], zeta[2], zeta[3])
            for j in 0..<64 {
                let x0 = Double(input[j]), x1 = Double(input[j &+ 64])
                let x2 = Double(input[j &+ 128]), x3 = Double(input[j &+ 192])
                let t = MLDSAField.multiply(x2, z1), u = MLDSAField.multiply(x3, z1)
                let y0 = x0 + t, y1 = x1 + u, y2 = x0 - t, y3 = x1 - u
                let v = MLDSAField.multiply(y1, z2), w = MLDSAField.multiply(y3, z3)
                a[j] = y0 + v
                a[j &+ 64] = y0 - v
                a[j &+ 128] = y2 + w
                a[j &+ 192] = y2 - w
            }
            // Layers of length 2h and h for h = 16 and 4, in blocks of 4h coefficients.
            var h = 16
            while h >= 4 {
                var start = 0
                while start < n {
                    let outer = zeta[64 / h &+ start / (4 &* h)]
                    let innerIndex = 128 / h &+ start / (2 &* h)
                    let (innerLow, innerHigh) = (zeta[innerIndex], zeta[innerIndex &+ 1])
                    let p0 = a + start, p1 = p0 + h, p2 = p1 + h, p3 = p2 + h
                    for j in 0..<h {
                        let x0 = p0[j], x1 = p1[j], x2 = p2[j], x3 = p3[j]
                        let t = MLDSAField.multiply(x2, outer), u = MLDSAField.multiply(x3, outer)
                        let y0 = x0 + t, y1 = x1 + u, y2 = x0 - t, y3 = x1 - u
                        let v = MLDSAField.multiply(y1, innerLow), w = MLDSAField.multiply(y3, innerHigh)
                        p0[j] = y0 + v
                        p1[j] = y0 - v
                        p2[j] = y2 + w
                        p3[j] = y2 - w
                    }
                    start &+= 4 &* h
                }
                h &>>= 2
            }
            // Layers of length 2 and 1, four coefficients at a time.
            for block in 0..<64 {
                let p = a + 4 &* block
                let x0 = p[0], x1 = p[1], x2 = p[2], x3 = p[3]
                let outer = zeta[64 &+ block]
                let t = MLDSAField.multiply(x2, outer), u = MLDSAField.multiply(x3, outer)
                let y0 = x0 + t, y1 = x1 + u, y2 = x0 - t, y3 = x1 - u
                let v = MLDSAField.multiply(y1, zeta[128 &+ 2 &* block])
                let w = MLDSAField.multiply(y3, zeta[129 &+ 2 &* block])
                p[0] = y0 + v
                p[1] = y0 - v
                p[2] = y2 + w
                p[3] = y2 - w
            }
        }
    }

    /// a = NTT^-1(â) (Algorithm 42, Gentleman-Sande butterflies with −ζ, then the factor 1/256)
    /// for reduced â, which is overwritten; the output is reduced.
    @inline(__always)
    static func inverse(_ a: UnsafeMutablePointer<Double>, into output: UnsafeMutablePointer<Int32>) {
        zetas.withUnsafeBufferPointer { table in
            guard let zeta = table.baseAddress else { return }
            // Layers of length 1 and 2, four coefficients at a time. (hi − lo)·ζ = (lo − hi)·(−ζ).
            for block in 0..<64 {
                let p = a + 4 &* block
                let x0 = p[0], x1 = p[1], x2 = p[2], x3 = p[3]
                let y0 = x0 + x1, y2 = x2 + x3
                let y1 = MLDSAField.multiply(x1 - x0, zeta[255 &- 2 &* block])
                let y3 = MLDSAField.multiply(x3 - x2, zeta[254 &- 2 &* block])
                let outer = zeta[127 &- block]
                p[0] = y0 + y2
                p[1] = y1 + y3
                p[2] = MLDSAField.multiply(y2 - y0, outer)
                p[3] = MLDSAField.multiply(y3 - y1, outer)
            }
            // Layers of length h and 2h for h = 4 and 16, in blocks of 4h coefficients.
            var h = 4
            while h <= 16 {
                var start = 0
                while start < n {
                    let innerIndex = 256 / h &- 1 &- start / (2 &* h)
                    let (innerLow, innerHigh) = (zeta[innerIndex], zeta[innerIndex &- 1])
                    let outer = zeta[128 / h &- 1 &- start / (4 &* h)]
                    let p0 = a + start, p1 = p0 + h, p2 = p1 + h, p3 = p2 + h
                    for j in 0..<h {
                        let x0 = p0[j], x1 = p1[j], x2 = p2[j], x3 = p3[j]
                        let y0 = x0 + x1, y2 = x2 + x3
                        let y1 = MLDSAField.multiply(x1 - x0, innerLow)
                        let y3 = MLDSAField.multiply(x3 - x2, innerHigh)
                        p0[j] = y0 + y2
                        p1[j] = y1 + y3
                        p2[j] = MLDSAField.multiply(y2 - y0, outer)
                        p3[j] = MLDSAField.multiply(y3 - y1, outer)
                    }
                    start &+= 4 &* h
                }
                h &<<= 2
            }
            // Layers of length 64 and 128 with the factor 1/256 folded in, writing Int32 output.
            let (innerLow, innerHigh) = (zeta[3], zeta[2])
            let scaledOuter = MLDSAField.multiply(zeta[1], inverseScale)
            for j in 0..<64 {
                let x0 = a[j], x1 = a[j &+ 64], x2 = a[j &+ 128], x3 = a[j &+ 192]
                let y0 = x0 + x1, y2 = x2 + x3
                let y1 = MLDSAField.multiply(x1 - x0, innerLow)
                let y3 = MLDSAField.multiply(x3 - x2, innerHigh)
                output[j] = MLDSAField.toInt32(MLDSAField.multiply(y0 + y2, inverseScale))
                output[j &+ 64] = MLDSAField.toInt32(MLDSAField.multiply(y1 + y3, inverseScale))
                output[j &+ 128] = MLDSAField.toInt32(MLDSAField.multiply(y2 - y0, scaledOuter))
                output[j &+ 192] = MLDSAField.toInt32(MLDSAField.multiply(y3 - y1, scaledOuter))
            }
        }
    }
}
