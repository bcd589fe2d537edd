/// Fixed-size heap memory for ML-DSA key material and scratch space. Buffers that may hold secrets
/// (the default) are zeroed with ``secureZero`` before they are freed; public ones (a public key's
/// matrix, a verifier's scratch space) skip that.
///
/// Key objects fill their buffers once while they are built and only read them afterwards, which
/// is what makes sharing them across tasks safe. Scratch buffers live inside one call.
final class MLDSABuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    let base: UnsafeMutablePointer<Element>
    let count: Int
    private let secret: Bool
    private var byteCount: Int { count * MemoryLayout<Element>.stride }

    /// Allocates `count` elements (at least one), all bits zero. Pass `secret: false` only for
    /// memory that never holds secret values, and `zeroed: false` only for a buffer that its
    /// creator writes in full before anything reads it (its old contents are never read).
    init(count: Int, secret: Bool = true, zeroed: Bool = true) {
        self.count = max(count, 1)
        self.secret = secret
        let bytes = self.count * MemoryLayout<Element>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        if zeroed { raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes) }
        base = raw.bindMemory(to: Element.self, capacity: self.count)
    }

    /// The i-th polynomial of a buffer of polynomials (256 coefficients each).
    @inline(__always)
    func polynomial(_ index: Int) -> UnsafeMutablePointer<Element> {
        base + index &* MLDSA65Parameters.n
    }

    /// The contents as raw bytes.
    var rawBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base, count: byteCount)
    }

    deinit {
        if secret { secureZero(UnsafeMutableRawPointer(base), count: byteCount) }
        UnsafeMutableRawPointer(base).deallocate()
    }
}

/// Polynomials outside the NTT domain: Int32 coefficients.
typealias MLDSAPolynomials = MLDSABuffer<Int32>
/// Polynomials in the NTT domain: UInt32 residues (see MLDSANTT.swift).
typealias MLDSANTTPolynomials = MLDSABuffer<UInt32>
/// Â in the layout that ``MLDSAPolynomial/matrixTimesVector(_:matrix:_:)`` reads: UInt64 per
/// coefficient.
typealias MLDSAMatrix = MLDSABuffer<UInt64>
/// Bytes.
typealias MLDSABytes = MLDSABuffer<UInt8>

extension MLDSABuffer {
    /// Allocates `polynomials` zeroed polynomials.
    convenience init(polynomials: Int, secret: Bool = true, zeroed: Bool = true) {
        self.init(count: polynomials * MLDSA65Parameters.n, secret: secret, zeroed: zeroed)
    }
}

extension MLDSABuffer where Element == UInt8 {
    /// A subrange as raw bytes.
    func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }
}
