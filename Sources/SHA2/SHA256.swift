#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SHA-256 (FIPS 180-4), in one call or incrementally, from the platform's crypto library
/// (OpenSSL's libcrypto on Linux, CommonCrypto on Apple platforms), which uses the CPU's SHA
/// instructions where it has them: checking a 10,000-post manifest against its CID is a few
/// milliseconds rather than tens. A copy of a hasher goes on independently of the original.
///
/// The `x-cipher-body-sha256` header is the lowercase hex SHA-256 of the exact request body:
/// hash a streamed body with ``update(data:)`` as it is produced (`ClassicalCrypto` adds
/// `hash(fileAt:chunkByteCount:)` for a file).
///
/// Every SHA-256 of the package is this: `Transport` fingerprints TLS keys with it, `ClassicalCrypto`
/// and everything above it hash with it.
public struct SHA256: Sendable {
    /// The digest length in bytes.
    public static let byteCount = 32

    private var engine = SHA256Engine()

    /// Creates a hasher with nothing absorbed.
    public init() {}

    /// Absorbs more input.
    public mutating func update(data: some DataProtocol) {
        data.regions.forEach { region in
            region.withUnsafeBytes { update(bufferPointer: $0) }
        }
    }

    /// Absorbs more input from raw memory.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        guard let base = bufferPointer.baseAddress, !bufferPointer.isEmpty else { return }
        ownEngine()
        engine.update(base, count: bufferPointer.count)
    }

    /// Returns the digest of everything absorbed.
    public consuming func finalize() -> [UInt8] {
        ownEngine()
        return [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            if let base = buffer.baseAddress { engine.finalize(into: base) }
            count = Self.byteCount
        }
    }

    /// Copies the engine before a change when another hasher shares it.
    private mutating func ownEngine() {
        if !isKnownUniquelyReferenced(&engine) { engine = engine.copy() }
    }

    /// Returns the SHA-256 digest of `data`.
    public static func hash(data: some DataProtocol) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: data)
        return hasher.finalize()
    }
}
