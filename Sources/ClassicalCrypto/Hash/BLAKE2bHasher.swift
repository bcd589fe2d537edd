// Pure-Swift BLAKE2b (RFC 7693) with the full parameter block used by libsodium's
// crypto_generichash_blake2b_salt_personal: digest length 1...64, key 0...64 bytes,
// 16-byte salt and 16-byte personalization (fanout = depth = 1, sequential mode).
//
// Written from RFC 7693 (sections 2.5-3.3) and the BLAKE2 paper's parameter-block layout.
// The compression function has no data-dependent branches or table indices: the message
// schedule (SIGMA) is applied at compile time by passing the message words in permuted order.

import PQCrypto


// MARK: - State layout

/// Byte layout of the raw BLAKE2b state (one 256-byte, 64-byte-aligned region).
/// Kept in raw memory so the owner can zero it reliably (no stray copies of a struct).
internal enum BLAKE2bLayout {
    /// h[0..7], the chaining value.
    static let chain = 0
    /// Low 64 bits of the byte counter t.
    static let counterLow = 64
    /// High 64 bits of the byte counter t.
    static let counterHigh = 72
    /// Number of bytes currently in `buffer` (0...128).
    static let buffered = 80
    /// Requested digest length.
    static let digestLength = 88
    /// 0 = accepting input, 1 = finalized, 2 = constructed with invalid parameters.
    static let status = 96
    /// The pending (not yet compressed) block.
    static let buffer = 128
    /// Total size of the state.
    static let size = 256
    /// Block size in bytes.
    static let blockSize = 128

    static let statusActive: UInt64 = 0
    static let statusFinalized: UInt64 = 1
    static let statusInvalid: UInt64 = 2
}

/// BLAKE2b initialization vector (the SHA-512 IV, RFC 7693 section 2.6).
@usableFromInline internal let blake2bIV0: UInt64 = 0x6a09e667f3bcc908
@usableFromInline internal let blake2bIV1: UInt64 = 0xbb67ae8584caa73b
@usableFromInline internal let blake2bIV2: UInt64 = 0x3c6ef372fe94f82b
@usableFromInline internal let blake2bIV3: UInt64 = 0xa54ff53a5f1d36f1
@usableFromInline internal let blake2bIV4: UInt64 = 0x510e527fade682d1
@usableFromInline internal let blake2bIV5: UInt64 = 0x9b05688c2b3e6c1f
@usableFromInline internal let blake2bIV6: UInt64 = 0x1f83d9abfb41bd6b
@usableFromInline internal let blake2bIV7: UInt64 = 0x5be0cd19137e2179

// MARK: - Compression function

/// The 16-word working vector; kept in a struct of scalars so the optimizer keeps it in registers.
private struct BLAKE2bWork {
    var v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15: UInt64
}

@inline(__always)
private func rotr64(_ x: UInt64, _ n: UInt64) -> UInt64 {
    (x &>> n) | (x &<< (64 &- n))
}

/// Mixing function G (RFC 7693 section 3.1).
@inline(__always)
private func mix(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64, _ x: UInt64, _ y: UInt64) {
    a = a &+ b &+ x
    d = rotr64(d ^ a, 32)
    c = c &+ d
    b = rotr64(b ^ c, 24)
    a = a &+ b &+ y
    d = rotr64(d ^ a, 16)
    c = c &+ d
    b = rotr64(b ^ c, 63)
}

/// One round; the caller passes the message words already permuted by SIGMA[r].
@inline(__always)
private func round(
    _ v: inout BLAKE2bWork,
    _ s0: UInt64, _ s1: UInt64, _ s2: UInt64, _ s3: UInt64, _ s4: UInt64, _ s5: UInt64, _ s6: UInt64, _ s7: UInt64,
    _ s8: UInt64, _ s9: UInt64, _ s10: UInt64, _ s11: UInt64, _ s12: UInt64, _ s13: UInt64, _ s14: UInt64, _ s15: UInt64
) {
    mix(&v.v0, &v.v4, &v.v8, &v.v12, s0, s1)
    mix(&v.v1, &v.v5, &v.v9, &v.v13, s2, s3)
    mix(&v.v2, &v.v6, &v.v10, &v.v14, s4, s5)
    mix(&v.v3, &v.v7, &v.v11, &v.v15, s6, s7)
    mix(&v.v0, &v.v5, &v.v10, &v.v15, s8, s9)
    mix(&v.v1, &v.v6, &v.v11, &v.v12, s10, s11)
    mix(&v.v2, &v.v7, &v.v8, &v.v13, s12, s13)
    mix(&v.v3, &v.v4, &v.v9, &v.v14, s14, s15)
}

@inline(__always)
private func loadWord(_ p: UnsafeRawPointer, _ index: Int) -> UInt64 {
    UInt64(littleEndian: p.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self))
}

/// Compresses `blockCount` consecutive 128-byte blocks at `input` into the chaining value in `state`,
/// advancing the byte counter by 128 per block (or by `lastBlockBytes` for the final block when `isLast`).
/// Only lengths (public) decide the control flow.
private func blake2bCompressBlocks(
    _ state: UnsafeMutableRawPointer, _ input: UnsafeRawPointer, _ blockCount: Int,
    isLast: Bool, lastBlockBytes: Int
) {
    var h0 = state.load(fromByteOffset: 0, as: UInt64.self)
    var h1 = state.load(fromByteOffset: 8, as: UInt64.self)
    var h2 = state.load(fromByteOffset: 16, as: UInt64.self)
    var h3 = state.load(fromByteOffset: 24, as: UInt64.self)
    var h4 = state.load(fromByteOffset: 32, as: UInt64.self)
    var h5 = state.load(fromByteOffset: 40, as: UInt64.self)
    var h6 = state.load(fromByteOffset: 48, as: UInt64.self)
    var h7 = state.load(fromByteOffset: 56, as: UInt64.self)
    var t0 = state.load(fromByteOffset: BLAKE2bLayout.counterLow, as: UInt64.self)
    var t1 = state.load(fromByteOffset: BLAKE2bLayout.counterHigh, as: UInt64.self)

    var block = input
    var remaining = blockCount
    while remaining > 0 {
        remaining &-= 1
        let final = isLast && remaining == 0
        let increment = UInt64(final ? lastBlockBytes : BLAKE2bLayout.blockSize)
        t0 = t0 &+ increment
        if t0 < increment { t1 = t1 &+ 1 }  // 128-bit counter carry (depends on length only)
        let f0: UInt64 = final ? ~0 : 0

        let m0 = loadWord(block, 0), m1 = loadWord(block, 1), m2 = loadWord(block, 2), m3 = loadWord(block, 3)
        let m4 = loadWord(block, 4), m5 = loadWord(block, 5), m6 = loadWord(block, 6), m7 = loadWord(block, 7)
        let m8 = loadWord(block, 8), m9 = loadWord(block, 9), m10 = loadWord(block, 10), m11 = loadWord(block, 11)
        let m12 = loadWord(block, 12), m13 = loadWord(block, 13), m14 = loadWord(block, 14), m15 = loadWord(block, 15)

        var v = BLAKE2bWork(
            v0: h0, v1: h1, v2: h2, v3: h3, v4: h4, v5: h5, v6: h6, v7: h7,
            v8: blake2bIV0, v9: blake2bIV1, v10: blake2bIV2, v11: blake2bIV3,
            v12: blake2bIV4 ^ t0, v13: blake2bIV5 ^ t1, v14: blake2bIV6 ^ f0, v15: blake2bIV7)

        // SIGMA rows 0...9, then rows 0 and 1 again (RFC 7693 section 2.7).
        round(&v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
        round(&v, m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)
        round(&v, m11, m8, m12, m0, m5, m2, m15, m13, m10, m14, m3, m6, m7, m1, m9, m4)
        round(&v, m7, m9, m3, m1, m13, m12, m11, m14, m2, m6, m5, m10, m4, m0, m15, m8)
        round(&v, m9, m0, m5, m7, m2, m4, m10, m15, m14, m1, m11, m12, m6, m8, m3, m13)
        round(&v, m2, m12, m6, m10, m0, m11, m8, m3, m4, m13, m7, m5, m15, m14, m1, m9)
        round(&v, m12, m5, m1, m15, m14, m13, m4, m10, m0, m7, m6, m3, m9, m2, m8, m11)
        round(&v, m13, m11, m7, m14, m12, m1, m3, m9, m5, m0, m15, m4, m8, m6, m2, m10)
        round(&v, m6, m15, m14, m9, m11, m3, m0, m8, m12, m2, m13, m7, m1, m4, m10, m5)
        round(&v, m10, m2, m8, m4, m7, m6, m1, m5, m15, m11, m9, m14, m3, m12, m13, m0)
        round(&v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
        round(&v, m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)

        h0 ^= v.v0 ^ v.v8
        h1 ^= v.v1 ^ v.v9
        h2 ^= v.v2 ^ v.v10
        h3 ^= v.v3 ^ v.v11
        h4 ^= v.v4 ^ v.v12
        h5 ^= v.v5 ^ v.v13
        h6 ^= v.v6 ^ v.v14
        h7 ^= v.v7 ^ v.v15
        block = block + BLAKE2bLayout.blockSize
    }

    state.storeBytes(of: h0, toByteOffset: 0, as: UInt64.self)
    state.storeBytes(of: h1, toByteOffset: 8, as: UInt64.self)
    state.storeBytes(of: h2, toByteOffset: 16, as: UInt64.self)
    state.storeBytes(of: h3, toByteOffset: 24, as: UInt64.self)
    state.storeBytes(of: h4, toByteOffset: 32, as: UInt64.self)
    state.storeBytes(of: h5, toByteOffset: 40, as: UInt64.self)
    state.storeBytes(of: h6, toByteOffset: 48, as: UInt64.self)
    state.storeBytes(of: h7, toByteOffset: 56, as: UInt64.self)
    state.storeBytes(of: t0, toByteOffset: BLAKE2bLayout.counterLow, as: UInt64.self)
    state.storeBytes(of: t1, toByteOffset: BLAKE2bLayout.counterHigh, as: UInt64.self)
}

// MARK: - Raw-state operations (shared by the hasher and Argon2)

/// Initializes a raw state (BLAKE2bLayout.size bytes, 8-byte aligned). Returns false (and marks the state
/// invalid) when a parameter is out of range. `salt`/`personalization` may be nil (all zero) or 16 bytes.
@discardableResult
internal func blake2bStateInit(
    _ state: UnsafeMutableRawPointer, digestLength: Int,
    key: UnsafeRawPointer?, keyLength: Int,
    salt: UnsafeRawPointer?, personalization: UnsafeRawPointer?
) -> Bool {
    state.initializeMemory(as: UInt8.self, repeating: 0, count: BLAKE2bLayout.size)
    guard digestLength >= 1, digestLength <= 64, keyLength >= 0, keyLength <= 64, keyLength == 0 || key != nil else {
        state.storeBytes(of: BLAKE2bLayout.statusInvalid, toByteOffset: BLAKE2bLayout.status, as: UInt64.self)
        return false
    }
    // Parameter block word 0: digest length, key length, fanout = 1, depth = 1; leaf length,
    // node offset, node depth and inner length are 0 (words 1...3).
    let p0 = UInt64(digestLength) | (UInt64(keyLength) << 8) | (1 << 16) | (1 << 24)
    let salt0 = salt.map { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) } ?? 0
    let salt1 = salt.map { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) } ?? 0
    let pers0 = personalization.map { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) } ?? 0
    let pers1 = personalization.map { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) } ?? 0
    state.storeBytes(of: blake2bIV0 ^ p0, toByteOffset: 0, as: UInt64.self)
    state.storeBytes(of: blake2bIV1, toByteOffset: 8, as: UInt64.self)
    state.storeBytes(of: blake2bIV2, toByteOffset: 16, as: UInt64.self)
    state.storeBytes(of: blake2bIV3, toByteOffset: 24, as: UInt64.self)
    state.storeBytes(of: blake2bIV4 ^ salt0, toByteOffset: 32, as: UInt64.self)
    state.storeBytes(of: blake2bIV5 ^ salt1, toByteOffset: 40, as: UInt64.self)
    state.storeBytes(of: blake2bIV6 ^ pers0, toByteOffset: 48, as: UInt64.self)
    state.storeBytes(of: blake2bIV7 ^ pers1, toByteOffset: 56, as: UInt64.self)
    state.storeBytes(of: UInt64(digestLength), toByteOffset: BLAKE2bLayout.digestLength, as: UInt64.self)
    if keyLength > 0, let key {
        // The key, zero-padded to a full block, is the first block of input (RFC 7693 section 3.3).
        (state + BLAKE2bLayout.buffer).copyMemory(from: key, byteCount: keyLength)
        state.storeBytes(of: UInt64(BLAKE2bLayout.blockSize), toByteOffset: BLAKE2bLayout.buffered, as: UInt64.self)
    }
    return true
}

/// Absorbs `count` bytes. A full buffered block is only compressed once more input arrives,
/// because the last block must be compressed with the finalization flag.
internal func blake2bStateUpdate(_ state: UnsafeMutableRawPointer, _ input: UnsafeRawPointer?, _ count: Int) {
    guard count > 0, let input,
          state.load(fromByteOffset: BLAKE2bLayout.status, as: UInt64.self) == BLAKE2bLayout.statusActive
    else { return }
    let buffer = state + BLAKE2bLayout.buffer
    var bytes = input
    var remaining = count
    var buffered = Int(truncatingIfNeeded: state.load(fromByteOffset: BLAKE2bLayout.buffered, as: UInt64.self))

    if buffered > 0 {
        let take = min(BLAKE2bLayout.blockSize &- buffered, remaining)
        (buffer + buffered).copyMemory(from: bytes, byteCount: take)
        buffered &+= take
        bytes += take
        remaining &-= take
        if remaining == 0 {
            state.storeBytes(of: UInt64(buffered), toByteOffset: BLAKE2bLayout.buffered, as: UInt64.self)
            return
        }
        // More input follows, so the full buffered block is not the last one.
        blake2bCompressBlocks(state, UnsafeRawPointer(buffer), 1, isLast: false, lastBlockBytes: 0)
        buffered = 0
    }
    // Compress whole blocks straight from the input, always keeping at least one byte back.
    let directBlocks = (remaining &- 1) / BLAKE2bLayout.blockSize
    if directBlocks > 0 {
        blake2bCompressBlocks(state, bytes, directBlocks, isLast: false, lastBlockBytes: 0)
        bytes += directBlocks &* BLAKE2bLayout.blockSize
        remaining &-= directBlocks &* BLAKE2bLayout.blockSize
    }
    buffer.copyMemory(from: bytes, byteCount: remaining)
    state.storeBytes(of: UInt64(remaining), toByteOffset: BLAKE2bLayout.buffered, as: UInt64.self)
}

/// Writes the digest (exactly the configured length; `outputLength` must match) and zeroes the state.
/// Returns false, writing zeros instead, if the state is invalid/finalized or the length differs.
@discardableResult
internal func blake2bStateFinal(_ state: UnsafeMutableRawPointer, _ output: UnsafeMutableRawPointer?, _ outputLength: Int) -> Bool {
    let status = state.load(fromByteOffset: BLAKE2bLayout.status, as: UInt64.self)
    let digestLength = Int(truncatingIfNeeded: state.load(fromByteOffset: BLAKE2bLayout.digestLength, as: UInt64.self))
    guard status == BLAKE2bLayout.statusActive, outputLength == digestLength, let output else {
        if let output, outputLength > 0 { output.initializeMemory(as: UInt8.self, repeating: 0, count: outputLength) }
        secureZero(state, count: BLAKE2bLayout.size)
        state.storeBytes(of: BLAKE2bLayout.statusFinalized, toByteOffset: BLAKE2bLayout.status, as: UInt64.self)
        return false
    }
    let buffered = Int(truncatingIfNeeded: state.load(fromByteOffset: BLAKE2bLayout.buffered, as: UInt64.self))
    let buffer = state + BLAKE2bLayout.buffer
    (buffer + buffered).initializeMemory(as: UInt8.self, repeating: 0, count: BLAKE2bLayout.blockSize &- buffered)
    blake2bCompressBlocks(state, UnsafeRawPointer(buffer), 1, isLast: true, lastBlockBytes: buffered)
    // Serialize h little-endian; write only the requested prefix.
    var index = 0
    while index < digestLength {
        let word = state.load(fromByteOffset: index & ~7, as: UInt64.self)
        output.storeBytes(of: UInt8(truncatingIfNeeded: word &>> UInt64((index & 7) &* 8)), toByteOffset: index, as: UInt8.self)
        index &+= 1
    }
    secureZero(state, count: BLAKE2bLayout.size)
    state.storeBytes(of: BLAKE2bLayout.statusFinalized, toByteOffset: BLAKE2bLayout.status, as: UInt64.self)
    return true
}

// MARK: - Package API

/// Incremental BLAKE2b (RFC 7693) with libsodium's salt/personalization parameter block.
///
/// The state (which holds the key until the first block is compressed) lives in its own
/// allocation and is zeroed when finalized and when the hasher is deinitialized. A final class
/// (reference semantics) so no unzeroed copy of the state can exist.
package final class BLAKE2bHasher {
    private let state: UnsafeMutableRawPointer

    /// The digest length this hasher was created with.
    package let digestByteCount: Int

    /// Parameters are pre-validated by the caller: digestByteCount 1...64, key.count 0...64, salt and
    /// personalization exactly 16 bytes (zero-padded by caller). Out-of-range parameters do not trap:
    /// the hasher then ignores input and `finalize` writes zeros and returns false.
    package init(
        digestByteCount: Int, key: UnsafeRawBufferPointer,
        salt: UnsafeRawBufferPointer, personalization: UnsafeRawBufferPointer
    ) {
        self.digestByteCount = digestByteCount
        state = UnsafeMutableRawPointer.allocate(byteCount: BLAKE2bLayout.size, alignment: 64)
        // Wrong salt/personalization sizes are never read; digest length 0 marks the state invalid.
        let sizesOK = salt.count == 16 && personalization.count == 16
        blake2bStateInit(
            state, digestLength: sizesOK ? digestByteCount : 0,
            key: key.baseAddress, keyLength: key.count,
            salt: sizesOK ? salt.baseAddress : nil, personalization: sizesOK ? personalization.baseAddress : nil)
    }

    /// Absorbs `bytes`. Ignored after `finalize` or if the parameters were invalid.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        blake2bStateUpdate(state, bytes.baseAddress, bytes.count)
    }

    /// Writes the digest into `digest` (whose count must equal `digestByteCount`) and zeroes the state.
    /// Returns false and writes zeros if the count differs, the parameters were invalid, or the hasher
    /// was already finalized.
    @discardableResult
    package func finalize(into digest: UnsafeMutableRawBufferPointer) -> Bool {
        blake2bStateFinal(state, digest.baseAddress, digest.count)
    }

    /// One-shot BLAKE2b: `digest.count` is the digest length (1...64), key 0...64 bytes, salt and
    /// personalization exactly 16 bytes or empty (all zero). Returns false (digest zeroed) on bad lengths.
    @discardableResult
    package static func hash(
        into digest: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer,
        key: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, personalization: UnsafeRawBufferPointer
    ) -> Bool {
        guard salt.count == 16 || salt.count == 0, personalization.count == 16 || personalization.count == 0 else {
            if let base = digest.baseAddress, digest.count > 0 {
                base.initializeMemory(as: UInt8.self, repeating: 0, count: digest.count)
            }
            return false
        }
        return withUnsafeTemporaryAllocation(byteCount: BLAKE2bLayout.size, alignment: 64) { raw -> Bool in
            guard let state = raw.baseAddress else { return false }
            blake2bStateInit(
                state, digestLength: digest.count, key: key.baseAddress, keyLength: key.count,
                salt: salt.count == 16 ? salt.baseAddress : nil,
                personalization: personalization.count == 16 ? personalization.baseAddress : nil)
            blake2bStateUpdate(state, message.baseAddress, message.count)
            return blake2bStateFinal(state, digest.baseAddress, digest.count)
        }
    }

    deinit {
        secureZero(state, count: BLAKE2bLayout.size)
        state.deallocate()
    }
}
