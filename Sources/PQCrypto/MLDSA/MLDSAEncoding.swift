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

    /// Packs 10-bit coefficients, four to five bytes.
    static func packT1(_ t1: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        let raw = UnsafeMutableRawPointer(out)
        for g in 0..<(n / 4) {
            let v = t1 + 4 &* g
            var word = UInt64(UInt32(bitPattern: v[0]) & 0x3FF)
            word |= UInt64(UInt32(bitPattern: v[1]) & 0x3FF) &<< 10
            word |= UInt64(UInt32(bitPattern: v[2]) & 0x3FF) &<< 20
            word |= UInt64(UInt32(bitPattern: v[3]) & 0x3FF) &<< 30
            raw.storeBytes(of: UInt32(truncatingIfNeeded: word).littleEndian, toByteOffset: 5 &* g, as: UInt32.self)
            raw.storeBytes(of: UInt8(truncatingIfNeeded: word &>> 32), toByteOffset: 5 &* g &+ 4, as: UInt8.self)
        }
    }

    /// Unpacks 10-bit coefficients, four from five bytes (reads exactly 320 bytes).
    static func unpackT1(_ bytes: UnsafePointer<UInt8>, into t1: UnsafeMutablePointer<Int32>) {
        let raw = UnsafeRawPointer(bytes)
        for g in 0..<(n / 4) {
            let low = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 5 &* g, as: UInt32.self))
            let word = UInt64(low) | UInt64(raw.load(fromByteOffset: 5 &* g &+ 4, as: UInt8.self)) &<< 32
            let v = t1 + 4 &* g
            v[0] = Int32(truncatingIfNeeded: word & 0x3FF)
            v[1] = Int32(truncatingIfNeeded: (word &>> 10) & 0x3FF)
            v[2] = Int32(truncatingIfNeeded: (word &>> 20) & 0x3FF)
            v[3] = Int32(truncatingIfNeeded: (word &>> 30) & 0x3FF)
        }
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

    /// Packs 2^12 − t0 in 13 bits, eight coefficients to thirteen bytes (t0 in (−2^12, 2^12]).
    static func packT0(_ t0: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        let raw = UnsafeMutableRawPointer(out)
        for g in 0..<(n / 8) {
            let t = t0 + 8 &* g
            @inline(__always) func v(_ i: Int) -> UInt64 {
                UInt64(UInt32(bitPattern: (1 << 12) &- t[i]) & 0x1FFF)
            }
            let low = v(0) | v(1) &<< 13 | v(2) &<< 26 | v(3) &<< 39 | v(4) &<< 52
            let high = v(4) &>> 12 | v(5) &<< 1 | v(6) &<< 14 | v(7) &<< 27
            raw.storeBytes(of: low.littleEndian, toByteOffset: 13 &* g, as: UInt64.self)
            raw.storeBytes(of: UInt32(truncatingIfNeeded: high).littleEndian, toByteOffset: 13 &* g &+ 8, as: UInt32.self)
            raw.storeBytes(of: UInt8(truncatingIfNeeded: high &>> 32), toByteOffset: 13 &* g &+ 12, as: UInt8.self)
        }
    }

    static func unpackT0(_ bytes: UnsafePointer<UInt8>, into t0: UnsafeMutablePointer<Int32>) {
        unpackBits(bytes, width: 13, into: t0)
        for i in 0..<n { t0[i] = (1 << 12) &- t0[i] }
    }

    // MARK: z (signature) and the masking vector y, γ1 − z in 20 bits

    /// Packs coefficients in (−γ1, γ1] as γ1 − z, four per ten bytes.
    @inline(__always)
    static func packZ(_ z: UnsafePointer<Int32>, into out: UnsafeMutablePointer<UInt8>) {
        let gamma1 = MLDSA65Parameters.gamma1
        let raw = UnsafeMutableRawPointer(out)
        for g in 0..<(n / 4) {
            let v = z + 4 &* g
            @inline(__always) func value(_ i: Int) -> UInt64 {
                UInt64(UInt32(bitPattern: gamma1 &- v[i]) & 0xF_FFFF)
            }
            let last = value(3)
            let low = value(0) | value(1) &<< 20 | value(2) &<< 40 | last &<< 60
            raw.storeBytes(of: low.littleEndian, toByteOffset: 10 &* g, as: UInt64.self)
            raw.storeBytes(of: UInt16(truncatingIfNeeded: last &>> 4).littleEndian, toByteOffset: 10 &* g &+ 8, as: UInt16.self)
        }
    }

    /// Unpacks 20-bit values v into γ1 − v, in (−γ1, γ1], four from ten bytes (reads exactly 640
    /// bytes). Every bit pattern is valid.
    @inline(__always)
    static func unpackZ(_ bytes: UnsafePointer<UInt8>, into z: UnsafeMutablePointer<Int32>) {
        let gamma1 = MLDSA65Parameters.gamma1
        let raw = UnsafeRawPointer(bytes)
        for g in 0..<(n / 4) {
            let low = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 10 &* g, as: UInt64.self))
            let high = UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 10 &* g &+ 8, as: UInt16.self)))
            let v = z + 4 &* g
            // γ1 − x = (x XOR (2^20 − 1)) − (γ1 − 1) for 20-bit x: one XOR for the three fields of
            // `low`, then a subtraction of a constant (a single three-operand instruction).
            let inverted = low ^ 0x0FFF_FFFF_FFFF_FFFF
            v[0] = Int32(truncatingIfNeeded: inverted & 0xF_FFFF) &- (gamma1 &- 1)
            v[1] = Int32(truncatingIfNeeded: (inverted &>> 20) & 0xF_FFFF) &- (gamma1 &- 1)
            v[2] = Int32(truncatingIfNeeded: (inverted &>> 40) & 0xF_FFFF) &- (gamma1 &- 1)
            v[3] = gamma1 &- Int32(truncatingIfNeeded: low &>> 60 | high &<< 4)
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
