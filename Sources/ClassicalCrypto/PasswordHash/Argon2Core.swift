// Pure-Swift Argon2 version 0x13 (RFC 9106): Argon2d, Argon2i and Argon2id with any number of
// lanes (computed sequentially), an optional secret and associated data.
//
// Written from RFC 9106 sections 3.1-3.6. The compression function G uses the BlaMka
// multiply-add on SIMD2<UInt64> registers (a 1 KiB block is 64 such registers), so it maps to
// SSE2/NEON 64-bit lanes; the 32x32->64 multiply is expressed as a masked `&*`, which compilers
// lower to PMULUDQ / UMULL.
//
// Argon2d (and the second half of Argon2id's first pass) use data-dependent memory addressing:
// that is the algorithm's design, not a side channel introduced here.

import PQCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if _endian(big)
#error("Argon2Core assumes a little-endian host (blocks are stored as native UInt64 words)")
#endif


/// Argon2 (RFC 9106, version 0x13) key derivation.
package enum Argon2Core {
    /// The Argon2 variant (RFC 9106 section 3.1, type y = 0, 1, 2).
    package enum Variant: Sendable, Equatable {
        /// Data-dependent addressing (y = 0).
        case argon2d
        /// Data-independent addressing (y = 1).
        case argon2i
        /// Data-independent for the first half of the first pass, then data-dependent (y = 2).
        case argon2id
    }

    /// Why `deriveKey` failed.
    package struct Failure: Error, Equatable, Sendable {
        /// The failure category.
        package enum Reason: Sendable, Equatable {
            /// A count or cost parameter is outside the range RFC 9106 allows.
            case parameterOutOfRange
            /// The block memory could not be allocated.
            case outOfMemory
        }

        /// The failure category.
        package let reason: Reason

        /// A count or cost parameter is outside the range RFC 9106 allows.
        package static let parameterOutOfRange = Failure(reason: .parameterOutOfRange)
        /// The block memory could not be allocated.
        package static let outOfMemory = Failure(reason: .outOfMemory)
    }

    /// Derives `output.count` bytes (4...2^32-1) with Argon2 version 0x13.
    ///
    /// - passes: 1...2^32-1; memoryKiB: 8 * lanes ... 2^32-1 (rounded down to a multiple of 4 * lanes
    ///   blocks, as RFC 9106 specifies); lanes: 1...2^24-1; salt: 8...2^32-1 bytes; password, secret and
    ///   associated data: 0...2^32-1 bytes. Anything out of range throws `.parameterOutOfRange`.
    /// - Memory is allocated with posix_memalign (a failure throws `.outOfMemory`) and zeroed before it is freed.
    /// - With libsodium's crypto_pwhash parameters (lanes 1, passes = opslimit, memoryKiB = memlimit / 1024,
    ///   16-byte salt, empty secret and associated data) the output is identical to libsodium 1.0.18.
    package static func deriveKey(
        into output: UnsafeMutableRawBufferPointer, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
        passes: Int, memoryKiB: Int, lanes: Int, secret: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        variant: Variant
    ) throws(Failure) {
        let maxLength = UInt64(UInt32.max)
        guard lanes >= 1, lanes <= 0xFF_FFFF,
              passes >= 1, UInt64(passes) <= maxLength,
              memoryKiB >= 8 &* lanes, UInt64(memoryKiB) <= maxLength,
              output.count >= 4, UInt64(output.count) <= maxLength, let outputBase = output.baseAddress,
              UInt64(password.count) <= maxLength,
              salt.count >= 8, UInt64(salt.count) <= maxLength,
              UInt64(secret.count) <= maxLength,
              UInt64(associatedData.count) <= maxLength
        else { throw .parameterOutOfRange }

        // m' = 4 * p * floor(m / 4p) blocks: q = m' / p columns per lane, four segments per lane.
        let segmentLength = memoryKiB / (4 &* lanes)
        let laneLength = segmentLength &* 4
        let blockCount = laneLength &* lanes
        let (blockBytes, overflow1) = blockCount.multipliedReportingOverflow(by: blockSize)
        let (totalBytes, overflow2) = blockBytes.addingReportingOverflow(Scratch.size)
        guard !overflow1, !overflow2 else { throw .outOfMemory }

        var raw: UnsafeMutableRawPointer? = nil
        guard posix_memalign(&raw, 64, totalBytes) == 0, let memory = raw else { throw .outOfMemory }
        defer {
            secureZero(memory, count: totalBytes)
            free(memory)
        }

        let instance = Instance(
            memory: memory, scratch: memory + blockBytes, lanes: lanes, segmentLength: segmentLength,
            laneLength: laneLength, blockCount: blockCount, passes: passes, variant: variant)
        instance.scratch.initializeMemory(as: UInt8.self, repeating: 0, count: Scratch.size)

        instance.computeH0(
            outputLength: output.count, memoryKiB: memoryKiB, password: password, salt: salt,
            secret: secret, associatedData: associatedData)
        instance.fillFirstBlocks()
        for pass in 0 ..< passes {
            for slice in 0 ..< 4 {
                for lane in 0 ..< lanes {
                    instance.fillSegment(pass: pass, slice: slice, lane: lane)
                }
            }
        }
        instance.finalize(into: outputBase, count: output.count)
    }

    // MARK: - Internals

    /// Block size in bytes (128 64-bit words).
    fileprivate static let blockSize = 1024

    /// Scratch area after the blocks (zeroed with them).
    fileprivate enum Scratch {
        /// Row-permuted intermediate of G.
        static let temp = 0
        /// All-zero block (first G input when generating addresses).
        static let zero = 1024
        /// Address-generator input block Z.
        static let addressInput = 2048
        /// G(0, Z), then reused for the XOR of the final column.
        static let addressTemp = 3072
        /// Current block of 128 pseudo-random addresses.
        static let addresses = 4096
        /// BLAKE2b state.
        static let blake = 5120
        /// H0 (64 bytes) || LE32(column) || LE32(lane).
        static let seed = 5120 + 256
        /// H' chaining value (64 bytes).
        static let chain = 5120 + 384
        /// Small little-endian integer staging area.
        static let integer = 5120 + 448
        /// Total scratch size.
        static let size = 5120 + 512
    }

    /// Everything one derivation needs; all pointers are into the single allocation.
    fileprivate struct Instance {
        let memory: UnsafeMutableRawPointer
        let scratch: UnsafeMutableRawPointer
        let lanes: Int
        let segmentLength: Int
        let laneLength: Int
        let blockCount: Int
        let passes: Int
        let variant: Variant

        var typeCode: UInt32 {
            switch variant {
            case .argon2d: return 0
            case .argon2i: return 1
            case .argon2id: return 2
            }
        }

        @inline(__always)
        func block(lane: Int, column: Int) -> UnsafeMutableRawPointer {
            memory + (lane &* laneLength &+ column) &* Argon2Core.blockSize
        }

        /// Absorbs a 32-bit little-endian integer into the BLAKE2b state in scratch.
        func absorb(_ value: UInt32) {
            let staging = scratch + Scratch.integer
            staging.storeBytes(of: value.littleEndian, as: UInt32.self)
            blake2bStateUpdate(scratch + Scratch.blake, staging, 4)
        }

        /// H0 = H^64(LE32(p) || LE32(T) || LE32(m) || LE32(t) || LE32(v) || LE32(y) || LE32(|P|) || P ||
        /// LE32(|S|) || S || LE32(|K|) || K || LE32(|X|) || X)  (RFC 9106 section 3.2, step 1).
        func computeH0(
            outputLength: Int, memoryKiB: Int, password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer,
            secret: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer
        ) {
            let state = scratch + Scratch.blake
            blake2bStateInit(state, digestLength: 64, key: nil, keyLength: 0, salt: nil, personalization: nil)
            absorb(UInt32(truncatingIfNeeded: lanes))
            absorb(UInt32(truncatingIfNeeded: outputLength))
            absorb(UInt32(truncatingIfNeeded: memoryKiB))
            absorb(UInt32(truncatingIfNeeded: passes))
            absorb(0x13)
            absorb(typeCode)
            func absorbField(_ field: UnsafeRawBufferPointer) {
                absorb(UInt32(truncatingIfNeeded: field.count))
                blake2bStateUpdate(state, field.baseAddress, field.count)
            }
            absorbField(password)
            absorbField(salt)
            absorbField(secret)
            absorbField(associatedData)
            blake2bStateFinal(state, scratch + Scratch.seed, 64)
        }

        /// Variable-length hash H' (RFC 9106 section 3.3).
        func hPrime(into out: UnsafeMutableRawPointer, count: Int, input: UnsafeRawPointer, inputCount: Int) {
            let state = scratch + Scratch.blake
            let chain = scratch + Scratch.chain
            if count <= 64 {
                blake2bStateInit(state, digestLength: count, key: nil, keyLength: 0, salt: nil, personalization: nil)
                absorb(UInt32(truncatingIfNeeded: count))
                blake2bStateUpdate(state, input, inputCount)
                blake2bStateFinal(state, out, count)
                return
            }
            // V1 = H^64(LE32(T) || X); emit the first 32 bytes of each V_i; the last one is H^(T-32r)(V_r).
            blake2bStateInit(state, digestLength: 64, key: nil, keyLength: 0, salt: nil, personalization: nil)
            absorb(UInt32(truncatingIfNeeded: count))
            blake2bStateUpdate(state, input, inputCount)
            blake2bStateFinal(state, chain, 64)
            out.copyMemory(from: chain, byteCount: 32)
            var produced = 32
            while count &- produced > 64 {
                blake2bStateInit(state, digestLength: 64, key: nil, keyLength: 0, salt: nil, personalization: nil)
                blake2bStateUpdate(state, chain, 64)
                blake2bStateFinal(state, chain, 64)
                (out + produced).copyMemory(from: chain, byteCount: 32)
                produced &+= 32
            }
            let last = count &- produced
            blake2bStateInit(state, digestLength: last, key: nil, keyLength: 0, salt: nil, personalization: nil)
            blake2bStateUpdate(state, chain, 64)
            blake2bStateFinal(state, out + produced, last)
        }

        /// B[i][0] = H'^1024(H0 || LE32(0) || LE32(i)), B[i][1] = H'^1024(H0 || LE32(1) || LE32(i)).
        func fillFirstBlocks() {
            let seed = scratch + Scratch.seed
            for lane in 0 ..< lanes {
                for column in 0 ..< 2 {
                    seed.storeBytes(of: UInt32(column).littleEndian, toByteOffset: 64, as: UInt32.self)
                    seed.storeBytes(of: UInt32(truncatingIfNeeded: lane).littleEndian, toByteOffset: 68, as: UInt32.self)
                    hPrime(into: block(lane: lane, column: column), count: Argon2Core.blockSize, input: seed, inputCount: 72)
                }
            }
        }

        /// Produces the next 128 addresses: G(0, G(0, Z)) with Z's counter incremented (RFC 9106 section 3.4.1.2).
        func nextAddresses(counter: inout UInt64) {
            counter &+= 1
            let input = scratch + Scratch.addressInput
            input.storeBytes(of: counter, toByteOffset: 48, as: UInt64.self)
            let temp = scratch + Scratch.temp
            argon2FillBlock(scratch + Scratch.zero, input, scratch + Scratch.addressTemp, temp)
            argon2FillBlock(scratch + Scratch.zero, scratch + Scratch.addressTemp, scratch + Scratch.addresses, temp)
        }

        /// Computes one segment (a quarter of one lane) of one pass.
        func fillSegment(pass: Int, slice: Int, lane: Int) {
            let dataIndependent: Bool
            switch variant {
            case .argon2d: dataIndependent = false
            case .argon2i: dataIndependent = true
            case .argon2id: dataIndependent = pass == 0 && slice < 2
            }
            var counter: UInt64 = 0
            let addresses = scratch + Scratch.addresses
            if dataIndependent {
                let input = scratch + Scratch.addressInput
                input.initializeMemory(as: UInt8.self, repeating: 0, count: Argon2Core.blockSize)
                input.storeBytes(of: UInt64(pass), toByteOffset: 0, as: UInt64.self)
                input.storeBytes(of: UInt64(lane), toByteOffset: 8, as: UInt64.self)
                input.storeBytes(of: UInt64(slice), toByteOffset: 16, as: UInt64.self)
                input.storeBytes(of: UInt64(blockCount), toByteOffset: 24, as: UInt64.self)
                input.storeBytes(of: UInt64(passes), toByteOffset: 32, as: UInt64.self)
                input.storeBytes(of: UInt64(typeCode), toByteOffset: 40, as: UInt64.self)
            }
            let firstPassFirstSlice = pass == 0 && slice == 0
            let startIndex = firstPassFirstSlice ? 2 : 0
            if dataIndependent && startIndex != 0 { nextAddresses(counter: &counter) }

            // Reference window bounds (RFC 9106 section 3.4.2): in pass 0 only the finished slices,
            // later the three other slices; the current slice counts only for the own lane.
            let finishedSlices = pass == 0 ? slice &* segmentLength : laneLength &- segmentLength
            let windowStart = (pass != 0 && slice != 3) ? (slice &+ 1) &* segmentLength : 0
            let laneBase = block(lane: lane, column: 0)
            let temp = scratch + Scratch.temp
            let laneCount = UInt64(lanes)

            var index = startIndex
            while index < segmentLength {
                let column = slice &* segmentLength &+ index
                let current = laneBase + column &* Argon2Core.blockSize
                let previous = column == 0
                    ? laneBase + (laneLength &- 1) &* Argon2Core.blockSize
                    : current - Argon2Core.blockSize

                let pseudoRandom: UInt64
                if dataIndependent {
                    if index & 127 == 0 { nextAddresses(counter: &counter) }
                    pseudoRandom = addresses.load(fromByteOffset: (index & 127) &* 8, as: UInt64.self)
                } else {
                    pseudoRandom = previous.load(as: UInt64.self)
                }

                let referenceLane = firstPassFirstSlice ? lane : Int(truncatingIfNeeded: (pseudoRandom &>> 32) % laneCount)
                let windowSize: Int
                if referenceLane == lane {
                    windowSize = finishedSlices &+ index &- 1
                } else {
                    windowSize = finishedSlices &- (index == 0 ? 1 : 0)
                }
                let j1 = pseudoRandom & 0xFFFF_FFFF
                let x = (j1 &* j1) &>> 32
                let y = (UInt64(windowSize) &* x) &>> 32
                let relative = Int(truncatingIfNeeded: UInt64(windowSize) &- 1 &- y)
                let referenceColumn = (windowStart &+ relative) % laneLength
                let reference = block(lane: referenceLane, column: referenceColumn)

                if pass == 0 {
                    argon2FillBlock(previous, reference, current, temp)
                } else {
                    argon2FillBlockXor(previous, reference, current, temp)
                }
                index &+= 1
            }
        }

        /// C = XOR of the last column; tag = H'^T(C).
        func finalize(into output: UnsafeMutableRawPointer, count: Int) {
            let final = scratch + Scratch.addressTemp
            final.copyMemory(from: block(lane: 0, column: laneLength &- 1), byteCount: Argon2Core.blockSize)
            var lane = 1
            while lane < lanes {
                let last = block(lane: lane, column: laneLength &- 1)
                var offset = 0
                while offset < Argon2Core.blockSize {
                    let value = final.load(fromByteOffset: offset, as: UInt64.self) ^ last.load(fromByteOffset: offset, as: UInt64.self)
                    final.storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
                    offset &+= 8
                }
                lane &+= 1
            }
            hPrime(into: output, count: count, input: final, inputCount: Argon2Core.blockSize)
        }
    }
}

// MARK: - Compression function G (RFC 9106 sections 3.5, 3.6)

private typealias Lane2 = SIMD2<UInt64>

/// BlaMka: x + y + 2 * lo32(x) * lo32(y) (mod 2^64), on two 64-bit lanes.
@inline(__always)
private func blamka(_ x: Lane2, _ y: Lane2) -> Lane2 {
    let low = Lane2(repeating: 0xFFFF_FFFF)
    let product = (x & low) &* (y & low)
    return x &+ y &+ (product &+ product)
}

/// Rotations by 32 and 16 as 32/16-bit lane shuffles (PSHUFD / PSHUFLW+PSHUFHW on SSE2), so the
/// optimizer does not move the vector to general registers for a scalar `rol` (measured: it did).
@inline(__always)
private func rotr32(_ x: Lane2) -> Lane2 {
    let w = unsafeBitCast(x, to: SIMD4<UInt32>.self)
    return unsafeBitCast(SIMD4<UInt32>(w[1], w[0], w[3], w[2]), to: Lane2.self)
}

/// (x >> 24) | (rotr32(x) << 8) equals rotr(x, 24): the bits (x >> 32) << 8 are already in x >> 24.
/// Written this way so it stays in vector registers (a plain rotate pattern gets scalarized on SSE2).
@inline(__always)
private func rotr24(_ x: Lane2) -> Lane2 {
    (x &>> 24) | (rotr32(x) &<< 8)
}

@inline(__always)
private func rotr16(_ x: Lane2) -> Lane2 {
    let h = unsafeBitCast(x, to: SIMD8<UInt16>.self)
    return unsafeBitCast(SIMD8<UInt16>(h[1], h[2], h[3], h[0], h[5], h[6], h[7], h[4]), to: Lane2.self)
}

@inline(__always)
private func rotr63(_ x: Lane2) -> Lane2 {
    (x &>> 63) | (x &+ x)
}

/// GB on two independent columns at once.
@inline(__always)
private func gb(_ a: inout Lane2, _ b: inout Lane2, _ c: inout Lane2, _ d: inout Lane2) {
    a = blamka(a, b)
    d = rotr32(d ^ a)
    c = blamka(c, d)
    b = rotr24(b ^ c)
    a = blamka(a, b)
    d = rotr16(d ^ a)
    c = blamka(c, d)
    b = rotr63(b ^ c)
}

/// Permutation P on 16 words v0...v15 held as r_k = (v_{2k}, v_{2k+1}).
@inline(__always)
private func permute(
    _ r0: inout Lane2, _ r1: inout Lane2, _ r2: inout Lane2, _ r3: inout Lane2,
    _ r4: inout Lane2, _ r5: inout Lane2, _ r6: inout Lane2, _ r7: inout Lane2
) {
    // Columns: (v0,v4,v8,v12) (v1,v5,v9,v13) | (v2,v6,v10,v14) (v3,v7,v11,v15).
    gb(&r0, &r2, &r4, &r6)
    gb(&r1, &r3, &r5, &r7)
    // Diagonals: (v0,v5,v10,v15) (v1,v6,v11,v12) | (v2,v7,v8,v13) (v3,v4,v9,v14).
    var b0 = Lane2(r2[1], r3[0]), b1 = Lane2(r3[1], r2[0])
    var c0 = r5, c1 = r4
    var d0 = Lane2(r7[1], r6[0]), d1 = Lane2(r6[1], r7[0])
    gb(&r0, &b0, &c0, &d0)
    gb(&r1, &b1, &c1, &d1)
    r2 = Lane2(b1[1], b0[0]); r3 = Lane2(b0[1], b1[0])
    r4 = c1; r5 = c0
    r6 = Lane2(d0[1], d1[0]); r7 = Lane2(d1[1], d0[0])
}

@inline(__always)
private func load2(_ p: UnsafeRawPointer, _ offset: Int) -> Lane2 {
    p.load(fromByteOffset: offset, as: Lane2.self)
}

@inline(__always)
private func store2(_ p: UnsafeMutableRawPointer, _ offset: Int, _ value: Lane2) {
    p.storeBytes(of: value, toByteOffset: offset, as: Lane2.self)
}

/// next = G(previous, reference) [XOR next if `xorInto`]. All blocks 16-byte aligned; `next` aliases neither input.
/// R = X ^ Y is written to `next` (pre-XORed with the old `next`), P is applied row-wise into `temp` and
/// column-wise from `temp`, and the result is XORed into `next`.
@inline(__always)
private func argon2Compress(
    _ previous: UnsafeRawPointer, _ reference: UnsafeRawPointer, _ next: UnsafeMutableRawPointer,
    _ temp: UnsafeMutableRawPointer, xorInto: Bool
) {
    var row = 0
    while row < 8 {
        let base = row &* 128
        var r0 = load2(previous, base) ^ load2(reference, base)
        var r1 = load2(previous, base + 16) ^ load2(reference, base + 16)
        var r2 = load2(previous, base + 32) ^ load2(reference, base + 32)
        var r3 = load2(previous, base + 48) ^ load2(reference, base + 48)
        var r4 = load2(previous, base + 64) ^ load2(reference, base + 64)
        var r5 = load2(previous, base + 80) ^ load2(reference, base + 80)
        var r6 = load2(previous, base + 96) ^ load2(reference, base + 96)
        var r7 = load2(previous, base + 112) ^ load2(reference, base + 112)
        if xorInto {
            store2(next, base, r0 ^ load2(next, base))
            store2(next, base + 16, r1 ^ load2(next, base + 16))
            store2(next, base + 32, r2 ^ load2(next, base + 32))
            store2(next, base + 48, r3 ^ load2(next, base + 48))
            store2(next, base + 64, r4 ^ load2(next, base + 64))
            store2(next, base + 80, r5 ^ load2(next, base + 80))
            store2(next, base + 96, r6 ^ load2(next, base + 96))
            store2(next, base + 112, r7 ^ load2(next, base + 112))
        } else {
            store2(next, base, r0)
            store2(next, base + 16, r1)
            store2(next, base + 32, r2)
            store2(next, base + 48, r3)
            store2(next, base + 64, r4)
            store2(next, base + 80, r5)
            store2(next, base + 96, r6)
            store2(next, base + 112, r7)
        }
        permute(&r0, &r1, &r2, &r3, &r4, &r5, &r6, &r7)
        store2(temp, base, r0)
        store2(temp, base + 16, r1)
        store2(temp, base + 32, r2)
        store2(temp, base + 48, r3)
        store2(temp, base + 64, r4)
        store2(temp, base + 80, r5)
        store2(temp, base + 96, r6)
        store2(temp, base + 112, r7)
        row &+= 1
    }
    var column = 0
    while column < 8 {
        // Column i consists of the 16-byte registers i, i+8, ..., i+56.
        let base = column &* 16
        var r0 = load2(temp, base)
        var r1 = load2(temp, base + 128)
        var r2 = load2(temp, base + 256)
        var r3 = load2(temp, base + 384)
        var r4 = load2(temp, base + 512)
        var r5 = load2(temp, base + 640)
        var r6 = load2(temp, base + 768)
        var r7 = load2(temp, base + 896)
        permute(&r0, &r1, &r2, &r3, &r4, &r5, &r6, &r7)
        store2(next, base, r0 ^ load2(next, base))
        store2(next, base + 128, r1 ^ load2(next, base + 128))
        store2(next, base + 256, r2 ^ load2(next, base + 256))
        store2(next, base + 384, r3 ^ load2(next, base + 384))
        store2(next, base + 512, r4 ^ load2(next, base + 512))
        store2(next, base + 640, r5 ^ load2(next, base + 640))
        store2(next, base + 768, r6 ^ load2(next, base + 768))
        store2(next, base + 896, r7 ^ load2(next, base + 896))
        column &+= 1
    }
}

/// next = G(previous, reference) (first pass, address generation).
@inline(never)
private func argon2FillBlock(
    _ previous: UnsafeRawPointer, _ reference: UnsafeRawPointer, _ next: UnsafeMutableRawPointer, _ temp: UnsafeMutableRawPointer
) {
    argon2Compress(previous, reference, next, temp, xorInto: false)
}

/// next ^= G(previous, reference) (passes after the first, version 0x13).
@inline(never)
private func argon2FillBlockXor(
    _ previous: UnsafeRawPointer, _ reference: UnsafeRawPointer, _ next: UnsafeMutableRawPointer, _ temp: UnsafeMutableRawPointer
) {
    argon2Compress(previous, reference, next, temp, xorInto: true)
}
