#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DataProtocol {
    /// Calls `body` with each contiguous region of the bytes, in order.
    @inlinable func forEachRegion(_ body: (UnsafeRawBufferPointer) -> Void) {
        for region in regions {
            region.withUnsafeBytes { body($0) }
        }
    }

    /// The bytes as one contiguous array.
    @inlinable var byteArray: [UInt8] {
        if let array = self as? [UInt8] { return array }
        var array = [UInt8]()
        array.reserveCapacity(count)
        forEachRegion { array.append(contentsOf: $0) }
        return array
    }
}

/// Calls `body` with the bytes of `data` in one contiguous buffer, copying only when `data` is not
/// contiguous already (for example `DispatchData` with several regions).
@inlinable
package func withContiguousBytes<R>(of data: some DataProtocol, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if let result = data.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    let copy = [UInt8](data)
    return copy.withUnsafeBytes(body)
}
