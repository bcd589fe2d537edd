// Fixed-size arrays stored in place, for code that cannot use `InlineArray` (macOS 26 / iOS 26).

/// A fixed number of elements stored in place as a homogeneous tuple (`storage`), indexed like an
/// `InlineArray`. A homogeneous tuple's memory is bound to its element type, so a pointer to the
/// tuple is a pointer to its first element; the count is the tuple's size over the element stride.
@usableFromInline
protocol InlineElements {
    associatedtype Element
    associatedtype Storage
    var storage: Storage { get set }
}

extension InlineElements {
    /// Element `i`, bounds-checked as an `InlineArray` element is. (The getter is `mutating` so
    /// that the element is read in place, not from a copy of the whole tuple.)
    @inlinable subscript(i: Int) -> Element {
        @inline(__always) mutating get {
            precondition(i >= 0 && i < MemoryLayout<Storage>.size / MemoryLayout<Element>.stride, "Index out of bounds")
            return withUnsafeMutablePointer(to: &storage) {
                UnsafeMutableRawPointer($0).assumingMemoryBound(to: Element.self)[i]
            }
        }
        @inline(__always) set {
            precondition(i >= 0 && i < MemoryLayout<Storage>.size / MemoryLayout<Element>.stride, "Index out of bounds")
            withUnsafeMutablePointer(to: &storage) {
                UnsafeMutableRawPointer($0).assumingMemoryBound(to: Element.self)[i] = newValue
            }
        }
    }
}
