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
