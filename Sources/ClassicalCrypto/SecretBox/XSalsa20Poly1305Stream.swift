import CSodium
import PQCrypto

/// The XSalsa20-Poly1305 state behind streamed SecretBox: the keystream at any byte position and
/// an incremental Poly1305, so a message of any size can be processed in chunks and still give
/// the bytes of one `crypto_secretbox_easy` call.
///
/// SecretBox derives `subkey = HSalsa20(key, nonce[0..<16])` and runs Salsa20 with `subkey` and
/// `nonce[16..<24]`. The first 32 keystream bytes are the one-time Poly1305 key; the message is
/// XORed with the keystream from byte 32 on, and the tag authenticates the ciphertext. Secret
/// state lives in its own allocations and is zeroed on deinit.
final class XSalsa20Poly1305Stream {
    /// Salsa20 produces the keystream in 64-byte blocks.
    private static let blockByteCount = 64

    private let subkey: UnsafeMutableRawBufferPointer
    private let nonceTail: UnsafeMutableRawBufferPointer
    private let macState: UnsafeMutablePointer<crypto_onetimeauth_poly1305_state>
    private let macStateByteCount: Int
    /// Keystream bytes used so far, the Poly1305 key included.
    private var position: UInt64 = 32

    /// Starts a stream for `key` (32 bytes) and `nonce` (24 bytes); the caller has checked both.
    init(key: SymmetricKey, nonce: UnsafeRawBufferPointer) {
        SodiumLibrary.ensureInitialized()
        subkey = .allocate(byteCount: 32, alignment: 16)
        nonceTail = .allocate(byteCount: 8, alignment: 8)
        macStateByteCount = max(crypto_onetimeauth_poly1305_statebytes(), MemoryLayout<crypto_onetimeauth_poly1305_state>.size)
        macState = UnsafeMutableRawPointer.allocate(byteCount: macStateByteCount, alignment: 64)
            .bindMemory(to: crypto_onetimeauth_poly1305_state.self, capacity: 1)
        let noncePointer = nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)
        nonceTail.copyMemory(from: UnsafeRawBufferPointer(rebasing: nonce[16..<24]))
        key.withUnsafeBytes { keyBuffer in
            _ = crypto_core_hsalsa20(
                subkey.baseAddress!.assumingMemoryBound(to: UInt8.self), noncePointer,
                keyBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), nil)
        }
        var macKey = [UInt8](repeating: 0, count: 32)
        macKey.withUnsafeMutableBytes { buffer in
            _ = crypto_stream_salsa20(
                buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, nonceTailPointer, subkeyPointer)
            _ = crypto_onetimeauth_poly1305_init(macState, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        SecureMemory.zero(&macKey)
    }

    deinit {
        SecureMemory.zero(subkey)
        SecureMemory.zero(UnsafeMutableRawBufferPointer(start: macState, count: macStateByteCount))
        subkey.deallocate()
        nonceTail.deallocate()
        UnsafeMutableRawPointer(macState).deallocate()
    }

    private var subkeyPointer: UnsafePointer<UInt8> {
        UnsafePointer(subkey.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    private var nonceTailPointer: UnsafePointer<UInt8> {
        UnsafePointer(nonceTail.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// XORs `buffer` in place with the next `buffer.count` keystream bytes: encrypts plaintext or
    /// decrypts ciphertext.
    func xor(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var offset = 0
        while offset < buffer.count {
            let within = Int(position % UInt64(Self.blockByteCount))
            let block = position / UInt64(Self.blockByteCount)
            if within == 0 {
                // Block-aligned: libsodium continues from block `block` for the whole remainder.
                let length = buffer.count - offset
                _ = crypto_stream_salsa20_xor_ic(
                    base + offset, base + offset, UInt64(length), nonceTailPointer, block, subkeyPointer)
                position += UInt64(length)
                offset = buffer.count
            } else {
                // Mid-block (the first 32 message bytes, or after an unaligned chunk): XOR with the
                // rest of this block's keystream.
                let length = min(Self.blockByteCount - within, buffer.count - offset)
                withUnsafeTemporaryAllocation(byteCount: Self.blockByteCount, alignment: 16) { keystream in
                    let stream = keystream.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    stream.initialize(repeating: 0, count: Self.blockByteCount)
                    _ = crypto_stream_salsa20_xor_ic(
                        stream, stream, UInt64(Self.blockByteCount), nonceTailPointer, block, subkeyPointer)
                    for index in 0..<length { base[offset + index] ^= stream[within + index] }
                    SecureMemory.zero(keystream)
                }
                position += UInt64(length)
                offset += length
            }
        }
    }

    /// Feeds ciphertext to the Poly1305 tag.
    func authenticate(_ ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, !ciphertext.isEmpty else { return }
        _ = crypto_onetimeauth_poly1305_update(
            macState, base.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count))
    }

    /// Finishes the tag over everything passed to ``authenticate(_:)``. Call it once.
    func finalizeTag() -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: 16)
        tag.withUnsafeMutableBytes { buffer in
            _ = crypto_onetimeauth_poly1305_final(macState, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return tag
    }
}
