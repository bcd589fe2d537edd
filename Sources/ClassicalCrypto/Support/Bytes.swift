#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto

/// A typed, never-null base pointer for a possibly empty buffer: libsodium declares its pointer
/// parameters non-null even when the length is zero.
@inlinable
func withBase<R>(_ buffer: UnsafeRawBufferPointer, _ body: (UnsafePointer<UInt8>) -> R) -> R {
    if let base = buffer.baseAddress {
        return body(base.assumingMemoryBound(to: UInt8.self))
    }
    let zero: UInt8 = 0
    return withUnsafePointer(to: zero) { body($0) }
}

extension SymmetricKey {
    /// The key length in bytes, for length checks before a call into libsodium.
    var byteCount: Int { withUnsafeBytes { $0.count } }

    /// Creates a key whose bytes `initialize` writes into a scratch buffer that is zeroed and freed
    /// right after the key has copied it, so no unzeroed copy of the secret is left behind.
    static func makeSecure<E: Error>(
        byteCount: Int, _ initialize: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) -> SymmetricKey {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(byteCount, 1), alignment: 16)
        defer {
            SecureMemory.zero(scratch)
            scratch.deallocate()
        }
        let buffer = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<byteCount])
        try initialize(buffer)
        return SymmetricKey(data: UnsafeRawBufferPointer(buffer))
    }
}
