// Byte encodings and compression for ML-KEM (FIPS 203 Algorithms 5 and 6, §4.2.1).
// Compression uses multiply-and-shift instead of division so secret coefficients take constant time.

/// ByteEncode_12 of a polynomial with coefficients in (-q, q), mapped to [0, q) first: 384 bytes.
@inlinable
func kyberEncode12(_ r: UnsafePointer<Int16>, into out: UnsafeMutablePointer<UInt8>) {
    for i in 0..<128 {
        let t0 = UInt16(bitPattern: kyberCanonical(r[2 * i]))
        let t1 = UInt16(bitPattern: kyberCanonical(r[2 * i + 1]))
        out[3 * i] = UInt8(truncatingIfNeeded: t0)
        out[3 * i + 1] = UInt8(truncatingIfNeeded: t0 >> 8 | t1 << 4)
        out[3 * i + 2] = UInt8(truncatingIfNeeded: t1 >> 4)
    }
}

/// ByteDecode_12 of 384 bytes; returns false when a coefficient is not below q (the §7.2 modulus
/// check for encapsulation keys). Also used on secret key bytes, so the check is accumulated
/// arithmetically rather than by branching.
@inlinable
func kyberDecode12(_ bytes: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) -> Bool {
    var overflow: UInt16 = 0
    for i in 0..<128 {
        let b0 = UInt16(bytes[3 * i]), b1 = UInt16(bytes[3 * i + 1]), b2 = UInt16(bytes[3 * i + 2])
        let d0 = b0 | (b1 & 0x0F) << 8
        let d1 = b1 >> 4 | b2 << 4
        // 3328 − d wraps past 0x8000 exactly when d ≥ q (d < 4096).
        overflow |= (3328 &- d0) | (3328 &- d1)
        r[2 * i] = Int16(bitPattern: d0)
        r[2 * i + 1] = Int16(bitPattern: d1)
    }
    return overflow & 0x8000 == 0
}

/// Compress_10 then ByteEncode_10: 320 bytes.
@inlinable
func kyberCompressEncode10(_ r: UnsafePointer<Int16>, into out: UnsafeMutablePointer<UInt8>) {
    @inline(__always) func compress(_ x: Int16) -> UInt16 {
        let value = UInt64(UInt16(bitPattern: kyberCanonical(x)))
        return UInt16(truncatingIfNeeded: ((value << 10 &+ 1665) &* 1_290_167) >> 32) & 0x3FF
    }
    for i in 0..<64 {
        let t0 = compress(r[4 * i]), t1 = compress(r[4 * i + 1])
        let t2 = compress(r[4 * i + 2]), t3 = compress(r[4 * i + 3])
        out[5 * i] = UInt8(truncatingIfNeeded: t0)
        out[5 * i + 1] = UInt8(truncatingIfNeeded: t0 >> 8 | t1 << 2)
        out[5 * i + 2] = UInt8(truncatingIfNeeded: t1 >> 6 | t2 << 4)
        out[5 * i + 3] = UInt8(truncatingIfNeeded: t2 >> 4 | t3 << 6)
        out[5 * i + 4] = UInt8(truncatingIfNeeded: t3 >> 2)
    }
}

/// ByteDecode_10 then Decompress_10 of 320 bytes.
@inlinable
func kyberDecodeDecompress10(_ bytes: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) {
    @inline(__always) func decompress(_ t: UInt32) -> Int16 {
        Int16(truncatingIfNeeded: ((t & 0x3FF) &* 3329 &+ 512) >> 10)
    }
    for i in 0..<64 {
        let b0 = UInt32(bytes[5 * i]), b1 = UInt32(bytes[5 * i + 1]), b2 = UInt32(bytes[5 * i + 2])
        let b3 = UInt32(bytes[5 * i + 3]), b4 = UInt32(bytes[5 * i + 4])
        r[4 * i] = decompress(b0 | b1 << 8)
        r[4 * i + 1] = decompress(b1 >> 2 | b2 << 6)
        r[4 * i + 2] = decompress(b2 >> 4 | b3 << 4)
        r[4 * i + 3] = decompress(b3 >> 6 | b4 << 2)
    }
}

/// Compress_4 then ByteEncode_4: 128 bytes.
@inlinable
func kyberCompressEncode4(_ r: UnsafePointer<Int16>, into out: UnsafeMutablePointer<UInt8>) {
    @inline(__always) func compress(_ x: Int16) -> UInt8 {
        let value = UInt32(UInt16(bitPattern: kyberCanonical(x)))
        return UInt8(truncatingIfNeeded: ((value << 4 &+ 1665) &* 80635) >> 28) & 0x0F
    }
    for i in 0..<128 {
        out[i] = compress(r[2 * i]) | compress(r[2 * i + 1]) << 4
    }
}

/// ByteDecode_4 then Decompress_4 of 128 bytes.
@inlinable
func kyberDecodeDecompress4(_ bytes: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) {
    for i in 0..<128 {
        let b = UInt32(bytes[i])
        r[2 * i] = Int16(truncatingIfNeeded: ((b & 0x0F) &* 3329 &+ 8) >> 4)
        r[2 * i + 1] = Int16(truncatingIfNeeded: ((b >> 4) &* 3329 &+ 8) >> 4)
    }
}

/// Decompress_1(ByteDecode_1(m)): each message bit becomes 0 or ⌈q/2⌉, without branching.
@inlinable
func kyberMessageToPolynomial(_ message: UnsafePointer<UInt8>, into r: UnsafeMutablePointer<Int16>) {
    for i in 0..<32 {
        for j in 0..<8 {
            let bit = Int16((message[i] >> UInt8(j)) & 1)
            r[8 * i + j] = (0 &- bit) & 1665
        }
    }
}

/// ByteEncode_1(Compress_1(r)): the 32-byte message, without branching.
@inlinable
func kyberPolynomialToMessage(_ r: UnsafePointer<Int16>, into message: UnsafeMutablePointer<UInt8>) {
    for i in 0..<32 {
        var byte: UInt8 = 0
        for j in 0..<8 {
            let value = UInt32(UInt16(bitPattern: kyberCanonical(r[8 * i + j])))
            let bit = (((value << 1) &+ 1665) &* 80635) >> 28 & 1
            byte |= UInt8(truncatingIfNeeded: bit) << UInt8(j)
        }
        message[i] = byte
    }
}
