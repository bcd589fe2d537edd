#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(CSodium)
import CSodium
#endif
import PQCrypto

/// XSalsa20-Poly1305 authenticated encryption in the byte layout PyNaCl and every Cipher Station
/// use: `nonce(24) ‖ tag(16) ‖ ciphertext`.
///
/// On Apple platforms (and Linux builds without the `SystemLibraries` trait) it runs in pure Swift;
/// on Linux by default in libsodium. Both give the same bytes.
///
/// Post blobs, encrypted metadata, graph blobs and the sealed part of a key envelope all use this
/// layout (PyNaCl's `SecretBox.encrypt`, libsodium's "easy" combined form with the nonce in front).
/// Seal and open data in memory with ``seal(_:using:)`` and ``open(_:using:)``; stream large files
/// with ``SecretBoxFileSealer`` and ``openFile(at:to:using:chunkByteCount:)``, which give the
/// same bytes.
public enum SecretBox {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Nonce length in bytes.
    public static let nonceByteCount = 24
    /// Poly1305 tag length in bytes.
    public static let tagByteCount = 16
    /// Bytes a sealed box adds to its message: nonce and tag.
    public static let overheadByteCount = nonceByteCount + tagByteCount

    /// Seals `message` under `key` with a fresh random nonce.
    ///
    /// - Returns: `nonce ‖ tag ‖ ciphertext`, 40 bytes longer than `message`.
    /// - Throws: ``ClassicalCryptoError/invalidKeyLength(expected:actual:)`` unless `key` is 32 bytes.
    public static func seal(_ message: some DataProtocol, using key: SymmetricKey) throws(ClassicalCryptoError) -> Data {
        let nonce = SecureRandom.bytes(count: nonceByteCount)
        return try seal(message, using: key, nonce: nonce)
    }

    /// Seals `message` under `key` with the given nonce.
    ///
    /// A nonce must never be reused with the same key: use ``seal(_:using:)`` unless you are
    /// reproducing known bytes (test vectors).
    /// - Throws: ``ClassicalCryptoError/invalidKeyLength(expected:actual:)`` or
    ///   ``ClassicalCryptoError/invalidNonceLength(expected:actual:)``.
    public static func seal(
        _ message: some DataProtocol, using key: SymmetricKey, nonce: some DataProtocol
    ) throws(ClassicalCryptoError) -> Data {
        let nonceBytes = [UInt8](nonce)
        let messageCount = message.count
        var output = Data(count: messageCount + overheadByteCount)
        let result = output.withUnsafeMutableBytes { target in
            withContiguousBytes(of: message) { source in
                nonceBytes.withUnsafeBytes { nonceBuffer in
                    Result { () throws(ClassicalCryptoError) in try seal(source, into: target, using: key, nonce: nonceBuffer) }
                }
            }
        }
        try result.get()
        return output
    }

    /// Seals the bytes of `message` into `output` (exactly `message.count + 40` bytes), without
    /// allocating: the form for hot paths that reuse buffers.
    ///
    /// - Throws: ``ClassicalCryptoError/invalidKeyLength(expected:actual:)``,
    ///   ``ClassicalCryptoError/invalidNonceLength(expected:actual:)``, or
    ///   ``ClassicalCryptoError/invalidParameter(name:reason:)`` when `output` has the wrong size.
    public static func seal(
        _ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        using key: SymmetricKey, nonce: UnsafeRawBufferPointer
    ) throws(ClassicalCryptoError) {
        try checkKey(key)
        guard nonce.count == nonceByteCount else {
            throw .invalidNonceLength(expected: nonceByteCount, actual: nonce.count)
        }
        guard output.count == message.count + overheadByteCount, let target = output.baseAddress else {
            throw .invalidParameter(name: "output buffer", reason: "must be \(message.count + overheadByteCount) bytes, got \(output.count)")
        }
        let out = target.assumingMemoryBound(to: UInt8.self)
        withBase(nonce) { noncePointer in
            out.update(from: noncePointer, count: nonceByteCount)
            key.withUnsafeBytes { keyBuffer in
                #if canImport(CSodium)
                SodiumLibrary.ensureInitialized()
                withBase(message) { messagePointer in
                    withBase(keyBuffer) { keyPointer in
                        // crypto_secretbox_easy writes tag ‖ ciphertext, the layout after our nonce.
                        _ = crypto_secretbox_easy(
                            out + nonceByteCount, messagePointer, UInt64(message.count), noncePointer, keyPointer)
                    }
                }
                #else
                // The same tag ‖ ciphertext layout, from the pure-Swift XSalsa20-Poly1305.
                _ = XSalsa20Poly1305.seal(
                    message, into: UnsafeMutableRawBufferPointer(rebasing: output[nonceByteCount...]), key: keyBuffer,
                    nonce: nonce)
                #endif
            }
        }
    }

    /// Opens `nonce ‖ tag ‖ ciphertext` sealed under `key` and returns the message.
    ///
    /// - Throws: ``ClassicalCryptoError/sealedBoxTooShort(minimum:actual:)`` for fewer than 40 bytes,
    ///   ``ClassicalCryptoError/authenticationFailed`` when the tag does not verify (wrong key or altered
    ///   bytes), ``ClassicalCryptoError/invalidKeyLength(expected:actual:)``.
    public static func open(_ sealedBox: some DataProtocol, using key: SymmetricKey) throws(ClassicalCryptoError) -> Data {
        let messageCount = try messageByteCount(sealedBoxByteCount: sealedBox.count)
        try checkKey(key)
        var output = Data(count: messageCount)
        let verified = output.withUnsafeMutableBytes { target in
            withContiguousBytes(of: sealedBox) { source in openRaw(source, into: target, using: key) }
        }
        guard verified else { throw .authenticationFailed }
        return output
    }

    /// Opens `nonce ‖ tag ‖ ciphertext` into `output` (exactly `sealedBox.count - 40` bytes),
    /// without allocating. On failure nothing is written to `output`.
    ///
    /// - Throws: as ``open(_:using:)``, and ``ClassicalCryptoError/invalidParameter(name:reason:)`` when
    ///   `output` has the wrong size.
    public static func open(
        _ sealedBox: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, using key: SymmetricKey
    ) throws(ClassicalCryptoError) {
        let messageCount = try messageByteCount(sealedBoxByteCount: sealedBox.count)
        try checkKey(key)
        guard output.count == messageCount else {
            throw .invalidParameter(name: "output buffer", reason: "must be \(messageCount) bytes, got \(output.count)")
        }
        guard openRaw(sealedBox, into: output, using: key) else { throw .authenticationFailed }
    }

    /// Opens a sealed box whose message is itself a key (a post key inside an envelope, a key file)
    /// and returns it as a `SymmetricKey`: the plaintext goes straight into zeroed-on-drop storage.
    ///
    /// - Throws: as ``open(_:using:)``.
    public static func openKey(_ sealedBox: some DataProtocol, using key: SymmetricKey) throws(ClassicalCryptoError) -> SymmetricKey {
        let messageCount = try messageByteCount(sealedBoxByteCount: sealedBox.count)
        try checkKey(key)
        return try SymmetricKey.makeSecure(byteCount: messageCount) { target throws(ClassicalCryptoError) in
            let verified = withContiguousBytes(of: sealedBox) { source in openRaw(source, into: target, using: key) }
            guard verified else { throw .authenticationFailed }
        }
    }

    /// Opens a sealed box whose message is secret (stored credentials, a key file) straight into
    /// zeroed-on-drop storage.
    ///
    /// - Throws: as ``open(_:using:)``.
    public static func openSecret(_ sealedBox: some DataProtocol, using key: SymmetricKey) throws(ClassicalCryptoError) -> SecretBytes {
        let messageCount = try messageByteCount(sealedBoxByteCount: sealedBox.count)
        try checkKey(key)
        return try SecretBytes(count: messageCount) { target throws(ClassicalCryptoError) in
            let verified = withContiguousBytes(of: sealedBox) { source in openRaw(source, into: target, using: key) }
            guard verified else { throw .authenticationFailed }
        }
    }

    /// The message length inside a sealed box of `count` bytes.
    static func messageByteCount(sealedBoxByteCount count: Int) throws(ClassicalCryptoError) -> Int {
        guard count >= overheadByteCount else {
            throw .sealedBoxTooShort(minimum: overheadByteCount, actual: count)
        }
        return count - overheadByteCount
    }

    static func checkKey(_ key: SymmetricKey) throws(ClassicalCryptoError) {
        let count = key.byteCount
        guard count == keyByteCount else { throw .invalidKeyLength(expected: keyByteCount, actual: count) }
    }

    /// Verifies and decrypts; `target` must hold `source.count - 40` bytes. On failure libsodium
    /// writes nothing to `target`.
    private static func openRaw(
        _ source: UnsafeRawBufferPointer, into target: UnsafeMutableRawBufferPointer, using key: SymmetricKey
    ) -> Bool {
        #if !canImport(CSodium)
        return key.withUnsafeBytes { keyBuffer in
            XSalsa20Poly1305.open(
                UnsafeRawBufferPointer(rebasing: source[nonceByteCount...]), into: target, key: keyBuffer,
                nonce: UnsafeRawBufferPointer(rebasing: source[0..<nonceByteCount]))
        }
        #else
        SodiumLibrary.ensureInitialized()
        let zero: UInt8 = 0
        return withUnsafePointer(to: zero) { dummy in
            let out = target.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafeMutablePointer(mutating: dummy)
            return withBase(source) { box in
                key.withUnsafeBytes { keyBuffer in
                    withBase(keyBuffer) { keyPointer in
                        crypto_secretbox_open_easy(
                            out, box + nonceByteCount, UInt64(source.count - nonceByteCount), box, keyPointer) == 0
                    }
                }
            }
        }
        #endif
    }
}
