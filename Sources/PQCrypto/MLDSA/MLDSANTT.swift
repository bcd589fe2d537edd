// The number-theoretic transform over Z_q[X]/(X^256 + 1) (FIPS 204 §7.5, Algorithms 41 and 42).
//
// The NTT domain is held in UInt32 with lazy reduction: a butterfly adds, subtracts (plus 2q, so
// nothing goes below zero) and multiplies by a twiddle ζ·2^32 mod q with an unsigned Montgomery
// product (MLDSAField.montgomeryMultiply, in [0, 2q) for any 32-bit input), so no layer needs a
// separate reduction. The products are zero-extended 32×32→64-bit multiplies, which baseline
// x86-64 (SSE2 `pmuludq`) and arm64 (`umull`) do in vector registers, and the sums are 32-bit
// lanes, four to a register. The loops are written on scalars for the vectorizer, except the two
// layers with butterflies inside four coefficients, which it leaves scalar; those use
// `MLDSALanes` (generic SIMD code runs many times slower in debug builds, so only there).
//
// Bounds: the forward transform takes Int32 with |a| < q and returns [0, 18q) (each layer adds
// at most 2q); the inverse takes [0, 2q) (a Montgomery product's range), lets sums grow to at most
// 512q < 2^32 in its last layer, and returns [0, q) as Int32. Like a pointwise product, which
// carries a factor 2^-32, the inverse multiplies by 2^32 on the way out, so NTT^-1(â ∘ b̂) comes
// out as the plain product a·b.

enum MLDSANTT {
    static let n = MLDSA65Parameters.n
    static let twoQ = 2 &* MLDSAField.qUnsigned

    /// ζ^BitRev8(k)·2^32 mod q for ζ = 1753, in [0, q); entry 0 is unused.
    /// (Computed from the definition; `MLDSAArithmeticTests` recomputes and compares it.)
    static let zetas: [UInt32] = [
        4193792, 25847, 5771523, 7861508, 237124, 7602457, 7504169, 466468,
        1826347, 2353451, 8021166, 6288512, 3119733, 5495562, 3111497, 2680103,
        2725464, 1024112, 7300517, 3585928, 7830929, 7260833, 2619752, 6271868,
        6262231, 4520680, 6980856, 5102745, 1757237, 8360995, 4010497, 280005,
        2706023, 95776, 3077325, 3530437, 6718724, 4788269, 5842901, 3915439,
        4519302, 5336701, 3574422, 5512770, 3539968, 8079950, 2348700, 7841118,
        6681150, 6736599, 3505694, 4558682, 3507263, 6239768, 6779997, 3699596,
        811944, 531354, 954230, 3881043, 3900724, 5823537, 2071892, 5582638,
        4450022, 6851714, 4702672, 5339162, 6927966, 3475950, 2176455, 6795196,
        7122806, 1939314, 4296819, 7380215, 5190273, 5223087, 4747489, 126922,
        3412210, 7396998, 2147896, 2715295, 5412772, 4686924, 7969390, 5903370,
        7709315, 7151892, 8357436, 7072248, 7998430, 1349076, 1852771, 6949987,
        5037034, 264944, 508951, 3097992, 44288, 7280319, 904516, 3958618,
        4656075, 8371839, 1653064, 5130689, 2389356, 8169440, 759969, 7063561,
        189548, 4827145, 3159746, 6529015, 5971092, 8202977, 1315589, 1341330,
        1285669, 6795489, 7567685, 6940675, 5361315, 4499357, 4751448, 3839961,
        2091667, 3407706, 2316500, 3817976, 5037939, 2244091, 5933984, 4817955,
        266997, 2434439, 7144689, 3513181, 4860065, 4621053, 7183191, 5187039,
        900702, 1859098, 909542, 819034, 495491, 6767243, 8337157, 7857917,
        7725090, 5257975, 2031748, 3207046, 4823422, 7855319, 7611795, 4784579,
        342297, 286988, 5942594, 4108315, 3437287, 5038140, 1735879, 203044,
        2842341, 2691481, 5790267, 1265009, 4055324, 1247620, 2486353, 1595974,
        4613401, 1250494, 2635921, 4832145, 5386378, 1869119, 1903435, 7329447,
        7047359, 1237275, 5062207, 6950192, 7929317, 1312455, 3306115, 6417775,
        7100756, 1917081, 5834105, 7005614, 1500165, 777191, 2235880, 3406031,
        7838005, 5548557, 6709241, 6533464, 5796124, 4656147, 594136, 4603424,
        6366809, 2432395, 2454455, 8215696, 1957272, 3369112, 185531, 7173032,
        5196991, 162844, 1616392, 3014001, 810149, 1652634, 4686184, 6581310,
        5341501, 3523897, 3866901, 269760, 2213111, 7404533, 1717735, 472078,
        7953734, 1723600, 6577327, 1910376, 6712985, 7276084, 8119771, 4546524,
        5441381, 6144432, 7959518, 6094090, 183443, 7403526, 1612842, 4834730,
        7826001, 3919660, 8332111, 7018208, 3937738, 1400424, 7534263, 1976782,
    ]

    /// 2^64/256 mod q: the inverse transform's final factor (1/256, and 2^32 to cancel the factor
    /// 2^-32 of the product before it, and 2^32 for the Montgomery product that applies it).
    static let inverseScale: UInt32 = 41_978

    // Both transforms run their eight layers as four radix-4 passes (two layers per pass), which
    // halves the loads and stores; each pass does exactly the butterflies of its two layers.

    /// One Cooley-Tukey butterfly: (a + ζb, a − ζb + 2q); each output is below bound(a) + 2q.
    @inline(__always)
    static func butterfly(_ a: UInt32, _ b: UInt32, _ zeta: UInt32) -> (UInt32, UInt32) {
        let t = MLDSAField.montgomeryMultiply(b, zeta)
        return (a &+ t, a &+ twoQ &- t)
    }

    /// One Gentleman-Sande butterfly with −ζ: (a + b, (b − a)·ζ) for a < `offset`, a multiple of q.
    @inline(__always)
    static func inverseButterfly(_ a: UInt32, _ b: UInt32, _ zeta: UInt32, offset: UInt32) -> (UInt32, UInt32) {
        (a &+ b, MLDSAField.montgomeryMultiply(b &+ offset &- a, zeta))
    }

    /// The same two butterflies on four lanes at a time.
    @inline(__always)
    static func butterfly(_ a: MLDSALanes, _ b: MLDSALanes, _ zeta: MLDSALanes) -> (MLDSALanes, MLDSALanes) {
        let t = b.montgomeryMultiplied(by: zeta)
        return (a &+ t, a &+ MLDSALanes(repeating: twoQ) &- t)
    }

    @inline(__always)
    static func inverseButterfly(
        _ a: MLDSALanes, _ b: MLDSALanes, _ zeta: MLDSALanes, offset: MLDSALanes
    ) -> (MLDSALanes, MLDSALanes) {
        (a &+ b, (b &+ offset &- a).montgomeryMultiplied(by: zeta))
    }

    /// â = NTT(a) (Algorithm 41, Cooley-Tukey butterflies, bit-reversed output order).
    @inline(__always)
    static func forward(_ input: UnsafePointer<Int32>, into a: UnsafeMutablePointer<UInt32>) {
        zetas.withUnsafeBufferPointer { table in
            guard let zeta = table.baseAddress else { return }
            let q = MLDSAField.q
            // Layers of length 128 and 64, reading the Int32 input shifted into (0, 2q).
            let (z1, z2, z3) = (zeta[1], zeta[2], zeta[3])
            for j in 0..<64 {
                let x0 = UInt32(bitPattern: input[j] &+ q), x1 = UInt32(bitPattern: input[j &+ 64] &+ q)
                let x2 = UInt32(bitPattern: input[j &+ 128] &+ q), x3 = UInt32(bitPattern: input[j &+ 192] &+ q)
                let (y0, y2) = butterfly(x0, x2, z1), (y1, y3) = butterfly(x1, x3, z1)
                (a[j], a[j &+ 64]) = butterfly(y0, y1, z2)
                (a[j &+ 128], a[j &+ 192]) = butterfly(y2, y3, z3)
            }
            // Layers of length 2h and h for h = 16 and 4, in blocks of 4h coefficients (one call
            // per h, so that h is a constant in each).
            @inline(__always) func radix4Pass(_ h: Int) {
                var start = 0
                while start < n {
                    let outer = zeta[64 / h &+ start / (4 &* h)]
                    let innerIndex = 128 / h &+ start / (2 &* h)
                    let (innerLow, innerHigh) = (zeta[innerIndex], zeta[innerIndex &+ 1])
                    let p0 = a + start, p1 = p0 + h, p2 = p1 + h, p3 = p2 + h
                    for j in 0..<h {
                        let (y0, y2) = butterfly(p0[j], p2[j], outer), (y1, y3) = butterfly(p1[j], p3[j], outer)
                        (p0[j], p1[j]) = butterfly(y0, y1, innerLow)
                        (p2[j], p3[j]) = butterfly(y2, y3, innerHigh)
                    }
                    start &+= 4 &* h
                }
            }
            radix4Pass(16)
            radix4Pass(4)
            // Layers of length 2 and 1 on two blocks of four at a time, regrouped into vectors
            // (the vectorizer leaves these short butterflies scalar): halves for distance 2,
            // even and odd lanes for distance 1.
            for pair in 0..<32 {
                let p = a + 8 &* pair
                let v0 = MLDSALanes.load(p), v1 = MLDSALanes.load(p + 4)
                let z0 = zeta[64 &+ 2 &* pair], z1 = zeta[65 &+ 2 &* pair]
                let (low, high) = butterfly(
                    MLDSALanes(v0[0], v0[1], v1[0], v1[1]), MLDSALanes(v0[2], v0[3], v1[2], v1[3]),
                    MLDSALanes(z0, z0, z1, z1))
                let (even, odd) = butterfly(
                    MLDSALanes(low[0], high[0], low[2], high[2]), MLDSALanes(low[1], high[1], low[3], high[3]),
                    MLDSALanes.load(zeta + (128 &+ 4 &* pair)))
                MLDSALanes(even[0], odd[0], even[1], odd[1]).store(p)
                MLDSALanes(even[2], odd[2], even[3], odd[3]).store(p + 4)
            }
        }
    }

    /// a = NTT^-1(â)·2^32 (Algorithm 42, Gentleman-Sande butterflies with −ζ, then the factor
    /// 1/256) for â in [0, 2q), which is overwritten; the output is in [0, q).
    @inline(__always)
    static func inverse(_ a: UnsafeMutablePointer<UInt32>, into output: UnsafeMutablePointer<Int32>) {
        zetas.withUnsafeBufferPointer { table in
            guard let zeta = table.baseAddress else { return }
            // Layers of length 1 and 2 on two blocks of four at a time, regrouped as in the forward
            // transform: sums below 4q, then 8q.
            for pair in 0..<32 {
                let p = a + 8 &* pair
                let v0 = MLDSALanes.load(p), v1 = MLDSALanes.load(p + 4)
                let k = 255 &- 4 &* pair
                let (even, odd) = inverseButterfly(
                    MLDSALanes(v0[0], v0[2], v1[0], v1[2]), MLDSALanes(v0[1], v0[3], v1[1], v1[3]),
                    MLDSALanes(zeta[k], zeta[k &- 1], zeta[k &- 2], zeta[k &- 3]), offset: MLDSALanes(repeating: twoQ))
                let z0 = zeta[127 &- 2 &* pair], z1 = zeta[126 &- 2 &* pair]
                let (low, high) = inverseButterfly(
                    MLDSALanes(even[0], odd[0], even[2], odd[2]), MLDSALanes(even[1], odd[1], even[3], odd[3]),
                    MLDSALanes(z0, z0, z1, z1), offset: MLDSALanes(repeating: 2 &* twoQ))
                MLDSALanes(low[0], low[1], high[0], high[1]).store(p)
                MLDSALanes(low[2], low[3], high[2], high[3]).store(p + 4)
            }
            // Layers of length h and 2h for h = 4 and 16, in blocks of 4h coefficients: each pass
            // multiplies the bound on the sums by 4 (to 32q, then 128q).
            // (One call per h, so that h and the bound are constants in each.)
            @inline(__always) func radix4Pass(_ h: Int, offset: UInt32) {
                var start = 0
                while start < n {
                    let innerIndex = 256 / h &- 1 &- start / (2 &* h)
                    let (innerLow, innerHigh) = (zeta[innerIndex], zeta[innerIndex &- 1])
                    let outer = zeta[128 / h &- 1 &- start / (4 &* h)]
                    let p0 = a + start, p1 = p0 + h, p2 = p1 + h, p3 = p2 + h
                    for j in 0..<h {
                        let (y0, y1) = inverseButterfly(p0[j], p1[j], innerLow, offset: offset)
                        let (y2, y3) = inverseButterfly(p2[j], p3[j], innerHigh, offset: offset)
                        (p0[j], p2[j]) = inverseButterfly(y0, y2, outer, offset: 2 &* offset)
                        (p1[j], p3[j]) = inverseButterfly(y1, y3, outer, offset: 2 &* offset)
                    }
                    start &+= 4 &* h
                }
            }
            radix4Pass(4, offset: 4 &* twoQ)   // the bound on this pass's input
            radix4Pass(16, offset: 16 &* twoQ)
            let offset = 64 &* twoQ
            // Layers of length 64 and 128 with the final factor folded into the last products
            // (sums below 256q, then 512q), writing Int32 output.
            let (innerLow, innerHigh) = (zeta[3], zeta[2])
            let scale = inverseScale
            let scaledOuter = MLDSAField.canonical(MLDSAField.montgomeryMultiply(zeta[1], scale))
            @inline(__always) func out(_ x: UInt32, _ factor: UInt32) -> Int32 {
                Int32(bitPattern: MLDSAField.subtractQIfAbove(MLDSAField.montgomeryMultiply(x, factor)))
            }
            for j in 0..<64 {
                let (y0, y1) = inverseButterfly(a[j], a[j &+ 64], innerLow, offset: offset)
                let (y2, y3) = inverseButterfly(a[j &+ 128], a[j &+ 192], innerHigh, offset: offset)
                output[j] = out(y0 &+ y2, scale)
                output[j &+ 64] = out(y1 &+ y3, scale)
                output[j &+ 128] = out(y2 &+ 2 &* offset &- y0, scaledOuter)
                output[j &+ 192] = out(y3 &+ 2 &* offset &- y1, scaledOuter)
            }
        }
    }
}

/// Four NTT-domain coefficients, for the layers the vectorizer leaves scalar.
typealias MLDSALanes = SIMD4<UInt32>

extension SIMD4 where Scalar == UInt32 {
    /// Lane-wise ``MLDSAField/montgomeryMultiply(_:_:)``, as two `pmuludq` (`umull`) products of
    /// the even lanes and two of the odd lanes: the 64-bit halves' low words are the even lanes.
    @inline(__always)
    func montgomeryMultiplied(by b: SIMD4<UInt32>) -> SIMD4<UInt32> {
        let low = SIMD2<UInt64>(repeating: 0xFFFF_FFFF)
        let x = unsafeBitCast(self, to: SIMD2<UInt64>.self), y = unsafeBitCast(b, to: SIMD2<UInt64>.self)
        let qInverse = SIMD2<UInt64>(repeating: UInt64(MLDSAField.negativeQInverse))
        let q = SIMD2<UInt64>(repeating: UInt64(MLDSAField.qUnsigned))
        let evenProduct = (x & low) &* (y & low), oddProduct = (x &>> 32) &* (y &>> 32)
        let even = evenProduct &+ (((evenProduct & low) &* qInverse) & low) &* q
        let odd = oddProduct &+ (((oddProduct & low) &* qInverse) & low) &* q
        return unsafeBitCast((even &>> 32) | (odd & ~low), to: SIMD4<UInt32>.self)
    }

    @inline(__always)
    static func load(_ pointer: UnsafePointer<UInt32>) -> SIMD4<UInt32> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<UInt32>.self)
    }

    @inline(__always)
    func store(_ pointer: UnsafeMutablePointer<UInt32>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: self, as: SIMD4<UInt32>.self)
    }
}
