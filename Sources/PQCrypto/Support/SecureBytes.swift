#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A fixed-size heap buffer for secret bytes that is zeroed when the last reference goes away.
///
/// Immutable after creation, so sharing it across tasks is safe.
@usableFromInline
final class SecureBytes: @unchecked Sendable {
    @usableFromInline let pointer: UnsafeMutableRawBufferPointer

    /// Allocates `count` zero bytes and lets `initialize` fill them; when `initialize` throws, the
    /// buffer is zeroed and freed and the error is rethrown. (The buffer is stored only once it is
    /// filled: a throw after that would run `deinit` too, freeing it twice.)
    @inlinable init<E: Error>(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 0), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try initialize(buffer)
        } catch {
            if let base = buffer.baseAddress { secureZero(base, count: buffer.count) }
            buffer.deallocate()
            throw error
        }
        pointer = buffer
    }

    @inlinable convenience init(bytes: some DataProtocol) {
        self.init(count: bytes.count) { destination in
            var offset = 0
            bytes.forEachRegion { region in
                if let source = region.baseAddress, !region.isEmpty, let target = destination.baseAddress {
                    (target + offset).copyMemory(from: source, byteCount: region.count)
                }
                offset += region.count
            }
        }
    }

    @inlinable var count: Int { pointer.count }

    deinit {
        if let base = pointer.baseAddress { secureZero(base, count: pointer.count) }
        pointer.deallocate()
    }
}
