// Byte encodings of polynomials, keys and signatures (FIPS 204 §7.1–7.2, Algorithms 16–28).
//
// Coefficients are written least-significant bit first, one after the other, with no padding.
// BitPack(w, a, b) stores b − w in as many bits as a + b needs; SimpleBitPack stores w itself.

enum MLDSAEncoding {
    static let n = MLDSA65Parameters.n

    /// Writes the low `width` bits of each of the 256 `values`, least-significant bit first.
    /// The loop shape depends only on `width`, never on the values.
    @inline(__always)
    static func packBits(_ values: UnsafePointer<Int32>, width: Int, into out: UnsafeMutablePointer<UInt8>) {
        var accumulator: UInt64 = 0
        var bits = 0
        var position = 0
        let mask: UInt64 = (1 << UInt64(width)) &- 1
        for i in 0..<n {
            accumulator |= (UInt64(truncatingIfNeeded: values[i]) & mask) &<< UInt64(bits)
            bits &+= width
            while bits >= 8 {
                out[position] = UInt8(truncatingIfNeeded: accumulator)
                accumulator &>>= 8
                bits &-= 8
                position &+= 1
            }
        }
    }

    /// Reads 256 values of `width` bits each (the inverse of `packBits`).
    @inline(__always)
    static func unpackBits(_ bytes: UnsafePointer<UInt8>, width: Int, into values: UnsafeMutablePointer<Int32>) {
        var accumulator: UInt64 = 0
        var bits = 0
        var position = 0
        let mask: UInt64 = (1 << UInt64(width)) &- 1
        for i in 0..<n {
            while bits < width {
                accumulator |= UInt64(bytes[position]) &<< UInt64(bits)
                position &+= 1
                bits &+= 8
            }
            values[i] = Int32(truncatingIfNeeded: accumulator & mask)
            accumulator &>>= UInt64(width)
            bits &-= width
        }
    }

    // MARK: t1 (public key), 10 bits

    static func packT1(_ t1: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        packBits(t1, width: 10, into: out)
    }

    static func unpackT1(_ bytes: UnsafePointer<UInt8>, into t1: UnsafeMutablePointer<Int32>) {
        unpackBits(bytes, width: 10, into: t1)
    }

    // MARK: s1, s2 (private key), η − s in 4 bits

    /// Packs coefficients in [−4, 4] as 4 − s, two per byte, low nibble first.
    static func packEta(_ s: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        let eta = MLDSA65Parameters.eta
        for i in 0..<(n / 2) {
            let low = UInt8(truncatingIfNeeded: eta &- s[2 &* i])
            let high = UInt8(truncatingIfNeeded: eta &- s[2 &* i &+ 1])
            out[i] = low | (high &<< 4)
        }
    }

    /// Unpacks 4 − s nibbles; returns all-ones if some nibble is above 8 (a coefficient outside
    /// [−4, 4]), else zero. Every nibble is examined, without branches, since these are secret.
    static func unpackEta(_ bytes: UnsafePointer<UInt8>, into s: UnsafeMutablePointer<Int32>) -> Int32 {
        let eta = MLDSA65Parameters.eta
        var invalid: Int32 = 0
        for i in 0..<(n / 2) {
            let low = Int32(bytes[i] & 15)
            let high = Int32(bytes[i] &>> 4)
            invalid |= (8 &- low) | (8 &- high)  // negative iff a nibble exceeds 8
            s[2 &* i] = eta &- low
            s[2 &* i &+ 1] = eta &- high
        }
        return invalid &>> 31
    }

    // MARK: t0 (private key), 2^12 − t0 in 13 bits

    static func packT0(_ t0: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: n) { shifted in
            guard let values = shifted.baseAddress else { return }
            for i in 0..<n { values[i] = (1 << 12) &- t0[i] }
            packBits(values, width: 13, into: out)
            secureZero(shifted)
        }
    }

    static func unpackT0(_ bytes: UnsafePointer<UInt8>, into t0: UnsafeMutablePointer<Int32>) {
        unpackBits(bytes, width: 13, into: t0)
        for i in 0..<n { t0[i] = (1 << 12) &- t0[i] }
    }

    // MARK: z (signature) and the masking vector y, γ1 − z in 20 bits

    /// Packs coefficients in (−γ1, γ1] as γ1 − z, two per five bytes.
    @inline(__always)
    static func packZ(_ z: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        let gamma1 = MLDSA65Parameters.gamma1
        for i in 0..<(n / 2) {
            let a = UInt32(bitPattern: gamma1 &- z[2 &* i])
            let b = UInt32(bitPattern: gamma1 &- z[2 &* i &+ 1])
            let o = out + 5 &* i
            o[0] = UInt8(truncatingIfNeeded: a)
            o[1] = UInt8(truncatingIfNeeded: a &>> 8)
            o[2] = UInt8(truncatingIfNeeded: (a &>> 16) | (b &<< 4))
            o[3] = UInt8(truncatingIfNeeded: b &>> 4)
            o[4] = UInt8(truncatingIfNeeded: b &>> 12)
        }
    }

    /// Unpacks 20-bit values v into γ1 − v, in (−γ1, γ1]. Every bit pattern is valid.
    @inline(__always)
    static func unpackZ(_ bytes: UnsafePointer<UInt8>, into z: UnsafeMutablePointer<Int32>) {
        let gamma1 = MLDSA65Parameters.gamma1
        for i in 0..<(n / 2) {
            let p = bytes + 5 &* i
            let b0 = Int32(p[0]), b1 = Int32(p[1]), b2 = Int32(p[2]), b3 = Int32(p[3]), b4 = Int32(p[4])
            let a = b0 | (b1 &<< 8) | ((b2 & 15) &<< 16)
            let b = (b2 &>> 4) | (b3 &<< 4) | (b4 &<< 12)
            z[2 &* i] = gamma1 &- a
            z[2 &* i &+ 1] = gamma1 &- b
        }
    }

    // MARK: w1 (commitment), 4 bits

    @inline(__always)
    static func packW1(_ w1: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        for i in 0..<(n / 2) {
            out[i] = UInt8(truncatingIfNeeded: w1[2 &* i] | (w1[2 &* i &+ 1] &<< 4))
        }
    }

    // MARK: hints (signature), ω + k bytes

    /// HintBitPack (Algorithm 20): the positions of the 1s of each polynomial, then the running
    /// counts. Requires at most ω ones in total (checked by the signer). Runs only on an accepted
    /// signature, whose hint is public.
    static func packHint(_ h: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        let omega = MLDSA65Parameters.omega
        out.initialize(repeating: 0, count: omega + MLDSA65Parameters.k)
        var index = 0
        for row in 0..<MLDSA65Parameters.k {
            let poly = h + row &* n
            for j in 0..<n where poly[j] != 0 {
                out[index] = UInt8(truncatingIfNeeded: j)
                index &+= 1
            }
            out[omega &+ row] = UInt8(truncatingIfNeeded: index)
        }
    }

    /// HintBitUnpack (Algorithm 21): fills h with 0/1 and returns false for a malformed encoding
    /// (a count above ω or below the previous count, positions not strictly increasing within a
    /// polynomial, or nonzero padding).
    static func unpackHint(_ bytes: UnsafePointer<UInt8>, into h: UnsafeMutablePointer<Int32>) -> Bool {
        let omega = MLDSA65Parameters.omega
        h.initialize(repeating: 0, count: MLDSA65Parameters.k * n)
        var index = 0
        for row in 0..<MLDSA65Parameters.k {
            let end = Int(bytes[omega + row])
            if end < index || end > omega { return false }
            let first = index
            while index < end {
                if index > first && bytes[index - 1] >= bytes[index] { return false }
                h[row * n + Int(bytes[index])] = 1
                index += 1
            }
        }
        while index < omega {
            if bytes[index] != 0 { return false }
            index += 1
        }
        return true
    }
}
