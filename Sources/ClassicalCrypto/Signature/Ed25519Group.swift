import PQCrypto
// The edwards25519 group: -x^2 + y^2 = 1 + d x^2 y^2 over GF(2^255 - 19).
// Extended coordinates and formulas from Hisil, Wong, Carter, Dawson, "Twisted Edwards Curves
// Revisited" (2008), for a = -1.

/// Extended point: x = X/Z, y = Y/Z, x*y = T/Z.
struct EdP3 {
    var X: EdFE, Y: EdFE, Z: EdFE, T: EdFE
    static let identity = EdP3(X: .zero, Y: .one, Z: .one, T: .zero)
}

/// Projective point: x = X/Z, y = Y/Z.
struct EdP2 {
    var X: EdFE, Y: EdFE, Z: EdFE
    static let identity = EdP2(X: .zero, Y: .one, Z: .one)
}

/// "Completed" point: x = X/Z, y = Y/T (result of an addition or doubling before the final products).
struct EdP1P1 {
    var X: EdFE, Y: EdFE, Z: EdFE, T: EdFE
}

/// A point prepared for repeated addition: (Y+X, Y-X, Z, 2d*T).
struct EdCached {
    var yPlusX: EdFE, yMinusX: EdFE, Z: EdFE, T2d: EdFE
}

/// An affine point prepared for mixed addition: (y+x, y-x, 2d*x*y).
struct EdNiels {
    var yPlusX: EdFE, yMinusX: EdFE, xy2d: EdFE
    static let identity = EdNiels(yPlusX: .one, yMinusX: .one, xy2d: .zero)
}

extension EdP1P1 {
    @inline(__always) var p2: EdP2 { EdP2(X: X * T, Y: Y * Z, Z: Z * T) }
    @inline(__always) var p3: EdP3 { EdP3(X: X * T, Y: Y * Z, Z: Z * T, T: X * Y) }
}

extension EdP2 {
    /// 2P. Output components are scaled by -1 relative to the textbook formula, which is the same
    /// projective point.
    @inline(__always) func doubled() -> EdP1P1 {
        let a = X.squared()
        let b = Y.squared()
        let zz = Z.squared()
        let c = zz + zz                    // loose
        let s = (X + Y).squared()
        let yOut = b + a                   // loose (= -H)
        let zOut = b - a                   // tight (= G)
        return EdP1P1(X: s - yOut,         // E
                      Y: yOut,
                      Z: zOut,
                      T: c - zOut)         // -F
    }

    /// Canonical 32-byte encoding: y with the sign of x in the top bit.
    func encode(into out: UnsafeMutableRawPointer) {
        let zi = Z.inverted()
        let x = X * zi
        let y = Y * zi
        y.store(out)
        let top = out.load(fromByteOffset: 31, as: UInt8.self)
        out.storeBytes(of: top ^ UInt8(truncatingIfNeeded: x.isNegative << 7), toByteOffset: 31, as: UInt8.self)
    }
}

extension EdP3 {
    @inline(__always) var p2: EdP2 { EdP2(X: X, Y: Y, Z: Z) }
    @inline(__always) func doubled() -> EdP1P1 { p2.doubled() }
    @inline(__always) var cached: EdCached {
        EdCached(yPlusX: Y + X, yMinusX: Y - X, Z: Z, T2d: T * EdFE.d2)
    }

    /// self + q
    @inline(__always) static func + (p: EdP3, q: EdCached) -> EdP1P1 {
        let a = (p.Y - p.X) * q.yMinusX
        let b = (p.Y + p.X) * q.yPlusX
        let c = p.T * q.T2d
        let zz = p.Z * q.Z
        let d = zz + zz
        return EdP1P1(X: b - a, Y: b + a, Z: d + c, T: d - c)
    }

    /// self - q
    @inline(__always) static func - (p: EdP3, q: EdCached) -> EdP1P1 {
        let a = (p.Y - p.X) * q.yPlusX
        let b = (p.Y + p.X) * q.yMinusX
        let c = p.T * q.T2d
        let zz = p.Z * q.Z
        let d = zz + zz
        return EdP1P1(X: b - a, Y: b + a, Z: d - c, T: d + c)
    }

    /// self + q (q affine)
    @inline(__always) static func + (p: EdP3, q: EdNiels) -> EdP1P1 {
        let a = (p.Y - p.X) * q.yMinusX
        let b = (p.Y + p.X) * q.yPlusX
        let c = p.T * q.xy2d
        let d = p.Z + p.Z
        return EdP1P1(X: b - a, Y: b + a, Z: d + c, T: d - c)
    }

    /// self - q (q affine)
    @inline(__always) static func - (p: EdP3, q: EdNiels) -> EdP1P1 {
        let a = (p.Y - p.X) * q.yPlusX
        let b = (p.Y + p.X) * q.yMinusX
        let c = p.T * q.xy2d
        let d = p.Z + p.Z
        return EdP1P1(X: b - a, Y: b + a, Z: d - c, T: d + c)
    }

    /// Decodes 32 bytes the way libsodium 1.0.18's verifier does: y is taken mod p (top bit
    /// ignored, no canonicity check here), x recovered from the curve equation (nil if y^2-1 over
    /// d y^2+1 is not a square), then the sign is applied. With `negate`, returns -P instead.
    /// A zero x with the sign bit set is accepted, as in libsodium. Variable time (public input).
    static func decode(_ s: UnsafeRawPointer, negate: Bool) -> EdP3? {
        let y = EdFE(bytes: s)
        let yy = y.squared()
        let u = yy - EdFE.one                          // y^2 - 1
        let v = (yy * EdFE.d + EdFE.one).carried()       // d y^2 + 1
        let v3 = v.squared() * v                     // v^3
        var x = (v3.squared() * v * u).pow22523()    // (u v^7)^((p-5)/8)
        x = x * v3 * u                               // u v^3 (u v^7)^((p-5)/8)
        let vxx = x.squared() * v
        if !(vxx - u).isZero {
            if !(vxx + u).isZero { return nil }
            x = x * EdFE.sqrtM1
        }
        let sign = UInt64(s.load(fromByteOffset: 31, as: UInt8.self) >> 7)
        // Keep x when its parity matches the sign bit (xor negate), otherwise use -x.
        if (x.isNegative != sign) != negate { x = -x }
        return EdP3(X: x, Y: y, Z: .one, T: x * y)
    }
}

// MARK: - Precomputed tables (public data, built once on first use)

/// Limbs per EdNiels entry in the flat tables.
private let nielsLimbs = 15

/// Converts projective points to affine Niels form with one shared inversion, appending to `out`.
private func appendNiels(_ points: [EdP3], to out: inout [UInt64]) {
    // Montgomery's trick: prefix products of Z, one inversion, then walk back.
    var prefix = [EdFE]()
    prefix.reserveCapacity(points.count)
    var acc = EdFE.one
    for p in points { prefix.append(acc); acc = acc * p.Z }
    var inv = acc.inverted()
    var zInv = [EdFE](repeating: .zero, count: points.count)
    var i = points.count - 1
    while i >= 0 {
        zInv[i] = inv * prefix[i]
        inv = inv * points[i].Z
        i -= 1
    }
    for (k, p) in points.enumerated() {
        let x = p.X * zInv[k], y = p.Y * zInv[k]
        let n = EdNiels(yPlusX: (y + x).carried(), yMinusX: y - x, xy2d: x * y * EdFE.d2)
        out.append(contentsOf: [n.yPlusX.v0, n.yPlusX.v1, n.yPlusX.v2, n.yPlusX.v3, n.yPlusX.v4,
                                n.yMinusX.v0, n.yMinusX.v1, n.yMinusX.v2, n.yMinusX.v3, n.yMinusX.v4,
                                n.xy2d.v0, n.xy2d.v1, n.xy2d.v2, n.xy2d.v3, n.xy2d.v4])
    }
}

/// The base point B (y = 4/5, x even).
private func basePoint() -> EdP3 {
    var enc: (UInt64, UInt64, UInt64, UInt64) = (0x6666666666666658, 0x6666666666666666,
                                                 0x6666666666666666, 0x6666666666666666)
    enc.0 = enc.0.littleEndian; enc.1 = enc.1.littleEndian
    enc.2 = enc.2.littleEndian; enc.3 = enc.3.littleEndian
    return withUnsafeBytes(of: &enc) { raw in
        EdP3.decode(raw.baseAddress.unsafelyUnwrapped, negate: false) ?? EdP3.identity
    }
}

/// Fixed-base comb table: row j (0..<32) holds k * 256^j * B for k = 1...8, as EdNiels.
private let baseCombTable: [UInt64] = {
    var points = [EdP3]()
    points.reserveCapacity(256)
    var p = basePoint()
    for _ in 0..<32 {
        var m = p
        points.append(m)
        let pc = p.cached
        for _ in 2...8 { m = (m + pc).p3; points.append(m) }
        // p *= 256
        var q = p.doubled()
        for _ in 0..<7 { q = q.p2.doubled() }
        p = q.p3
    }
    var out = [UInt64]()
    out.reserveCapacity(256 * nielsLimbs)
    appendNiels(points, to: &out)
    return out
}()

/// Odd multiples B, 3B, ..., 127B as EdNiels, for width-8 NAF in verification.
private let baseOddTable: [UInt64] = {
    var points = [EdP3]()
    points.reserveCapacity(64)
    let b = basePoint()
    let b2 = b.doubled().p3.cached
    var m = b
    points.append(m)
    for _ in 1..<64 { m = (m + b2).p3; points.append(m) }
    var out = [UInt64]()
    out.reserveCapacity(64 * nielsLimbs)
    appendNiels(points, to: &out)
    return out
}()

@inline(__always) private func loadFE(_ p: UnsafePointer<UInt64>) -> EdFE {
    EdFE(p[0], p[1], p[2], p[3], p[4])
}

@inline(__always) private func loadNiels(_ p: UnsafePointer<UInt64>) -> EdNiels {
    EdNiels(yPlusX: loadFE(p), yMinusX: loadFE(p + 5), xy2d: loadFE(p + 10))
}

/// Constant-time lookup of digit * (row point) for digit in -8...8: every entry of the row is read
/// and merged under a mask, the sign is applied with a masked swap/negation.
@inline(__always) private func selectNiels(_ row: UnsafePointer<UInt64>, _ digit: Int64) -> EdNiels {
    let neg = UInt64(bitPattern: digit) >> 63
    let absDigit = UInt64(bitPattern: (digit ^ (0 &- Int64(bitPattern: neg))) &+ Int64(bitPattern: neg))
    var r = EdNiels.identity
    var k: UInt64 = 1
    var entry = row
    while k <= 8 {
        let mask = 0 &- (((absDigit ^ k) &- 1) >> 63)
        let e = loadNiels(entry)
        r.yPlusX.select(e.yPlusX, mask: mask)
        r.yMinusX.select(e.yMinusX, mask: mask)
        r.xy2d.select(e.xy2d, mask: mask)
        k &+= 1
        entry += nielsLimbs
    }
    let negMask = 0 &- neg
    let yp = r.yPlusX
    r.yPlusX.select(r.yMinusX, mask: negMask)
    r.yMinusX.select(yp, mask: negMask)
    r.xy2d.select(-r.xy2d, mask: negMask)
    return r
}

/// a * B for a 32-byte little-endian scalar a < 2^255. Constant time in a: fixed sequence of
/// operations, table entries chosen by masks only. Temporary digits are wiped.
func edScalarMultBase(_ a: UnsafeRawPointer) -> EdP3 {
    withUnsafeTemporaryAllocation(of: Int64.self, capacity: 64) { eBuf in
        let e = eBuf.baseAddress.unsafelyUnwrapped
        for i in 0..<32 {
            let byte = Int64(a.load(fromByteOffset: i, as: UInt8.self))
            e[2 * i] = byte & 15
            e[2 * i + 1] = byte >> 4
        }
        // Recode to signed digits in -8..<8 (the last one in -8...8).
        var carry: Int64 = 0
        for i in 0..<63 {
            let t = e[i] &+ carry
            carry = (t &+ 8) >> 4
            e[i] = t &- (carry << 4)
        }
        e[63] &+= carry
        carry = 0

        var h = EdP3.identity
        var t = EdNiels.identity
        baseCombTable.withUnsafeBufferPointer { tb in
            let table = tb.baseAddress.unsafelyUnwrapped
            var i = 1
            while i < 64 {
                t = selectNiels(table + (i >> 1) * 8 * nielsLimbs, e[i])
                h = (h + t).p3
                i += 2
            }
            var r = h.doubled().p2.doubled().p2.doubled().p2.doubled()
            h = r.p3
            i = 0
            while i < 64 {
                t = selectNiels(table + (i >> 1) * 8 * nielsLimbs, e[i])
                h = (h + t).p3
                i += 2
            }
            edWipe(&r)
        }
        edWipe(&t)
        secureZero(UnsafeMutableRawPointer(e), count: 64 * 8)
        return h
    }
}

/// Width-w non-adjacent form of a 32-byte scalar < 2^253 into 256 signed odd digits (or zero).
/// Variable time: for public scalars only.
private func slidingNAF(_ s: UnsafeRawPointer, width w: Int, into naf: UnsafeMutablePointer<Int8>) {
    naf.initialize(repeating: 0, count: 256)
    let limbs: [UInt64] = [
        UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
        UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
        UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
        UInt64(littleEndian: s.loadUnaligned(fromByteOffset: 24, as: UInt64.self)),
        0,
    ]
    let size = UInt64(1) << UInt64(w)
    let windowMask = size - 1
    var pos = 0
    var carry: UInt64 = 0
    limbs.withUnsafeBufferPointer { lb in
        let l = lb.baseAddress.unsafelyUnwrapped
        while pos < 256 {
            let idx = pos >> 6, bit = pos & 63
            var buf = l[idx] >> UInt64(bit)
            if bit > 64 - w { buf |= l[idx + 1] << UInt64(64 - bit) }
            let window = carry &+ (buf & windowMask)
            if window & 1 == 0 { pos += 1; continue }
            if window < size / 2 {
                carry = 0
                naf[pos] = Int8(truncatingIfNeeded: window)
            } else {
                carry = 1
                naf[pos] = Int8(truncatingIfNeeded: Int64(bitPattern: window) &- Int64(bitPattern: size))
            }
            pos += w
        }
    }
}

/// a*A + b*B for public 32-byte scalars a, b < 2^253. Variable time (verification only).
func edDoubleScalarMultVartime(_ a: UnsafeRawPointer, _ pointA: EdP3, _ b: UnsafeRawPointer) -> EdP2 {
    // Odd multiples A, 3A, ..., 15A.
    var ai = [EdCached]()
    ai.reserveCapacity(8)
    ai.append(pointA.cached)
    let a2 = pointA.doubled().p3
    var m = pointA
    for _ in 1..<8 { m = (a2 + m.cached).p3; ai.append(m.cached) }

    return withUnsafeTemporaryAllocation(of: Int8.self, capacity: 512) { nafBuf in
        let nafA = nafBuf.baseAddress.unsafelyUnwrapped
        let nafB = nafA + 256
        slidingNAF(a, width: 5, into: nafA)
        slidingNAF(b, width: 8, into: nafB)
        var i = 255
        while i >= 0 && nafA[i] == 0 && nafB[i] == 0 { i -= 1 }
        var r = EdP2.identity
        if i < 0 { return r }
        return ai.withUnsafeBufferPointer { aTab in
            baseOddTable.withUnsafeBufferPointer { bt in
                let bTab = bt.baseAddress.unsafelyUnwrapped
                while i >= 0 {
                    var t = r.doubled()
                    let da = nafA[i], db = nafB[i]
                    if da > 0 {
                        t = (t.p3 + aTab[Int(da) >> 1])
                    } else if da < 0 {
                        t = (t.p3 - aTab[Int(-da) >> 1])
                    }
                    if db > 0 {
                        t = (t.p3 + loadNiels(bTab + (Int(db) >> 1) * nielsLimbs))
                    } else if db < 0 {
                        t = (t.p3 - loadNiels(bTab + (Int(-db) >> 1) * nielsLimbs))
                    }
                    r = t.p2
                    i -= 1
                }
                return r
            }
        }
    }
}
