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

    /// Allocates `count` bytes and lets `initialize` fill them.
    @inlinable init(count: Int, initialize: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        pointer = .allocate(byteCount: max(count, 0), alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try initialize(pointer)
        } catch {
            if let base = pointer.baseAddress { secureZero(base, count: pointer.count) }
            pointer.deallocate()
            throw error
        }
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

    /// Takes ownership of an allocated, initialized buffer.
    @inlinable init(adopting buffer: UnsafeMutableRawBufferPointer) {
        pointer = buffer
    }

    @inlinable var count: Int { pointer.count }

    deinit {
        if let base = pointer.baseAddress { secureZero(base, count: pointer.count) }
        pointer.deallocate()
    }
}
