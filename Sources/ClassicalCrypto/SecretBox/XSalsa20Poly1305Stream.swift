#if canImport(CSodium)
import CSodium
#endif
import PQCrypto

/// The XSalsa20-Poly1305 state behind streamed SecretBox: the keystream at any byte position and
/// an incremental Poly1305, so a message of any size can be processed in chunks and still give
/// the bytes of one `crypto_secretbox_easy` call.
///
/// SecretBox derives `subkey = HSalsa20(key, nonce[0..<16])` and runs Salsa20 with `subkey` and
/// `nonce[16..<24]`. The first 32 keystream bytes are the one-time Poly1305 key; the message is
/// XORed with the keystream from byte 32 on, and the tag authenticates the ciphertext. The three
/// primitive steps run in libsodium where it is linked (unless a test asks for pure Swift, to
/// compare the two) and in pure Swift elsewhere; the chunking is the same for both. Secret state
/// lives in its own allocations and is zeroed on deinit.
package final class XSalsa20Poly1305Stream {
    /// Salsa20 produces the keystream in 64-byte blocks.
    private static let blockByteCount = 64

    private let subkey: UnsafeMutableRawBufferPointer
    private let nonceTail: UnsafeMutableRawBufferPointer
    #if canImport(CSodium)
    /// libsodium's Poly1305 state, when the steps run in libsodium.
    private let macState: UnsafeMutablePointer<crypto_onetimeauth_poly1305_state>?
    private let macStateByteCount: Int
    #endif
    /// The pure-Swift Poly1305, when the steps run in pure Swift.
    private var mac: Poly1305?
    /// Keystream bytes used so far, the Poly1305 key included.
    private var position: UInt64 = 32

    /// Starts a stream for `key` (32 bytes) and `nonce` (24 bytes); the caller has checked both.
    /// `usesSystemLibrary` is ignored (pure Swift) where libsodium is not linked.
    package init(key: SymmetricKey, nonce: UnsafeRawBufferPointer, usesSystemLibrary: Bool = ClassicalCryptoBuild.usesSystemLibraries) {
        subkey = .allocate(byteCount: 32, alignment: 16)
        nonceTail = .allocate(byteCount: 8, alignment: 8)
        nonceTail.copyMemory(from: UnsafeRawBufferPointer(rebasing: nonce[16..<24]))
        let subkey = self.subkey, system = usesSystemLibrary && ClassicalCryptoBuild.usesSystemLibraries
        key.withUnsafeBytes { keyBuffer in
            withBase(keyBuffer) { keyPointer in
                withBase(nonce) { noncePointer in
                    #if canImport(CSodium)
                    if system {
                        SodiumLibrary.ensureInitialized()
                        _ = crypto_core_hsalsa20(
                            subkey.baseAddress!.assumingMemoryBound(to: UInt8.self), noncePointer, keyPointer, nil)
                        return
                    }
                    #endif
                    Salsa20.hsalsa20(key: keyPointer, input: noncePointer, output: subkey.baseAddress!)
                }
            }
        }
        // The Poly1305 key: the first 32 bytes of keystream block 0.
        let macKey = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.blockByteCount, alignment: 16)
        defer {
            SecureMemory.zero(macKey)
            macKey.deallocate()
        }
        macKey.initializeMemory(as: UInt8.self, repeating: 0)
        #if canImport(CSodium)
        if system {
            macStateByteCount = max(
                crypto_onetimeauth_poly1305_statebytes(), MemoryLayout<crypto_onetimeauth_poly1305_state>.size)
            let state = UnsafeMutableRawPointer.allocate(byteCount: macStateByteCount, alignment: 64)
                .bindMemory(to: crypto_onetimeauth_poly1305_state.self, capacity: 1)
            macState = state
            keystreamXOR(macKey, block: 0)
            _ = crypto_onetimeauth_poly1305_init(state, macKey.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return
        }
        macState = nil
        macStateByteCount = 0
        #endif
        keystreamXOR(macKey, block: 0)
        mac = Poly1305(key: macKey.baseAddress!)
    }

    deinit {
        SecureMemory.zero(subkey)
        subkey.deallocate()
        nonceTail.deallocate()
        #if canImport(CSodium)
        if let macState {
            SecureMemory.zero(UnsafeMutableRawBufferPointer(start: macState, count: macStateByteCount))
            UnsafeMutableRawPointer(macState).deallocate()
        }
        #endif
    }

    /// Whether the steps run in libsodium: it holds the Poly1305 state then.
    private var usesSystemLibrary: Bool {
        #if canImport(CSodium)
        macState != nil
        #else
        false
        #endif
    }

    /// XORs `buffer` with the keystream from the start of 64-byte block `block` on.
    private func keystreamXOR(_ buffer: UnsafeMutableRawBufferPointer, block: UInt64) {
        #if canImport(CSodium)
        if usesSystemLibrary {
            guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            _ = crypto_stream_salsa20_xor_ic(
                base, base, UInt64(buffer.count), nonceTail.baseAddress!.assumingMemoryBound(to: UInt8.self), block,
                subkey.baseAddress!.assumingMemoryBound(to: UInt8.self))
            return
        }
        #endif
        Salsa20.xor(buffer, key: subkey.baseAddress!, nonce: nonceTail.baseAddress!, initialCounter: block)
    }

    /// XORs `buffer` in place with the next `buffer.count` keystream bytes: encrypts plaintext or
    /// decrypts ciphertext.
    package func xor(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var offset = 0
        while offset < buffer.count {
            let within = Int(position % UInt64(Self.blockByteCount))
            let block = position / UInt64(Self.blockByteCount)
            if within == 0 {
                // Block-aligned: the keystream continues from block `block` for the whole remainder.
                let length = buffer.count - offset
                keystreamXOR(UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]), block: block)
                position += UInt64(length)
                offset = buffer.count
            } else {
                // Mid-block (the first 32 message bytes, or after an unaligned chunk): XOR with the
                // rest of this block's keystream.
                let length = min(Self.blockByteCount - within, buffer.count - offset)
                withUnsafeTemporaryAllocation(byteCount: Self.blockByteCount, alignment: 16) { keystream in
                    keystream.initializeMemory(as: UInt8.self, repeating: 0)
                    keystreamXOR(keystream, block: block)
                    for index in 0..<length { base[offset + index] ^= keystream[within + index] }
                    SecureMemory.zero(keystream)
                }
                position += UInt64(length)
                offset += length
            }
        }
    }

    /// Encrypts `chunk` in place and feeds the ciphertext to the tag: one step of sealing.
    package func sealChunk(_ chunk: UnsafeMutableRawBufferPointer) {
        process(chunk, sealing: true)
    }

    /// Feeds the ciphertext `chunk` to the tag and decrypts it in place: one step of opening.
    package func openChunk(_ chunk: UnsafeMutableRawBufferPointer) {
        process(chunk, sealing: false)
    }

    /// Seals (or, when `sealing` is false, opens) all of `buffer` in place, one
    /// ``sealChunk(_:)`` or ``openChunk(_:)`` per `chunkByteCount` bytes: an in-memory message
    /// through the chunking a file gets (for the tests and benchmarks).
    package func process(_ buffer: UnsafeMutableRawBufferPointer, inChunksOf chunkByteCount: Int, sealing: Bool) {
        var offset = 0
        while offset < buffer.count {
            process(UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<min(offset + chunkByteCount, buffer.count)]),
                    sealing: sealing)
            offset += chunkByteCount
        }
    }

    /// XOR and authentication of one chunk, in the order its direction needs. In pure Swift the
    /// block-aligned part runs both in one pass over the bytes (Poly1305 on one block while the
    /// next is encrypted), which is what makes streaming as fast as the one-shot seal.
    private func process(_ chunk: UnsafeMutableRawBufferPointer, sealing: Bool) {
        func stepwise(_ piece: UnsafeMutableRawBufferPointer) {
            if sealing {
                xor(piece)
                authenticate(UnsafeRawBufferPointer(piece))
            } else {
                authenticate(UnsafeRawBufferPointer(piece))
                xor(piece)
            }
        }
        guard let mac else {
            stepwise(chunk)
            return
        }
        // Up to the next block boundary (the first 32 message bytes, or after an unaligned chunk).
        let within = Int(position % UInt64(Self.blockByteCount))
        let head = within == 0 ? 0 : min(Self.blockByteCount - within, chunk.count)
        if head > 0 { stepwise(UnsafeMutableRawBufferPointer(rebasing: chunk[0..<head])) }
        let rest = UnsafeMutableRawBufferPointer(rebasing: chunk[head...])
        guard !rest.isEmpty else { return }
        let block = position / UInt64(Self.blockByteCount)
        Salsa20.xorAndAuthenticate(
            rest, key: subkey.baseAddress!, nonce: nonceTail.baseAddress!, initialCounter: block, mac: mac, sealing: sealing)
        position += UInt64(rest.count)
    }

    /// Feeds ciphertext to the Poly1305 tag.
    package func authenticate(_ ciphertext: UnsafeRawBufferPointer) {
        guard !ciphertext.isEmpty else { return }
        #if canImport(CSodium)
        if let macState, let base = ciphertext.baseAddress {
            _ = crypto_onetimeauth_poly1305_update(macState, base.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count))
            return
        }
        #endif
        mac?.update(ciphertext)
    }

    /// Finishes the tag over everything passed to ``authenticate(_:)``. Call it once.
    package func finalizeTag() -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: 16)
        tag.withUnsafeMutableBytes { buffer in
            #if canImport(CSodium)
            if let macState {
                _ = crypto_onetimeauth_poly1305_final(macState, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
                return
            }
            #endif
            mac?.finalize(into: buffer.baseAddress!)
        }
        return tag
    }
}
