/// Fixed-size heap memory for ML-DSA key material and scratch space, zeroed (with ``secureZero``)
/// before it is freed.
///
/// Key objects fill their buffers once while they are built and only read them afterwards, which
/// is what makes sharing them across tasks safe. Scratch buffers live inside one call.
final class MLDSABuffer<Element: FixedWidthInteger>: @unchecked Sendable {
    let base: UnsafeMutablePointer<Element>
    let count: Int

    /// Allocates `count` zeroed elements (at least one).
    init(count: Int) {
        self.count = max(count, 1)
        base = .allocate(capacity: self.count)
        base.initialize(repeating: 0, count: self.count)
    }

    /// The i-th polynomial of a buffer of polynomials (256 coefficients each).
    @inline(__always)
    func polynomial(_ index: Int) -> UnsafeMutablePointer<Element> {
        base + index &* MLDSA65Parameters.n
    }

    /// The contents as raw bytes.
    var rawBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: count * MemoryLayout<Element>.stride)
    }

    deinit {
        secureZero(UnsafeMutableRawPointer(base), count: count * MemoryLayout<Element>.stride)
        base.deallocate()
    }
}

/// A buffer of polynomials with Int32 coefficients.
typealias MLDSAPolynomials = MLDSABuffer<Int32>
/// A buffer of bytes.
typealias MLDSABytes = MLDSABuffer<UInt8>

extension MLDSABuffer where Element == Int32 {
    /// Allocates `polynomials` zeroed polynomials.
    convenience init(polynomials: Int) {
        self.init(count: polynomials * MLDSA65Parameters.n)
    }
}

extension MLDSABuffer where Element == UInt8 {
    /// Copies `bytes` into a new buffer of the same size.
    convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count)
        if let source = bytes.baseAddress {
            UnsafeMutableRawPointer(base).copyMemory(from: source, byteCount: bytes.count)
        }
    }

    /// A subrange as raw bytes.
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }
}
