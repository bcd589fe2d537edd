#if canImport(Glibc)
import CSystemRandom
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The operating system's random source refused to deliver bytes (`errno` from `getrandom`).
struct SystemRandomError: Error, Equatable {
    let errno: Int32
}

/// Key-generation seeds and signing randomness straight from the operating system's secure random
/// source, one call per operation: `SystemRandomNumberGenerator` costs a `getrandom` per 8-byte
/// draw, which for a 64-byte ML-KEM seed was a large part of key generation.
package enum SystemRandom {
    /// Fills `buffer` with secure random bytes: `getrandom` on Linux (looping on short reads and
    /// EINTR), `arc4random_buf` on Apple platforms.
    static func fill(throwing buffer: UnsafeMutableRawBufferPointer) throws(SystemRandomError) {
        guard var next = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Glibc)
        var remaining = buffer.count
        while remaining > 0 {
            let read = getrandom(next, remaining, 0)
            if read < 0 {
                if errno == EINTR { continue }
                throw SystemRandomError(errno: errno)
            }
            next += read
            remaining -= read
        }
        #elseif canImport(Darwin)
        arc4random_buf(next, buffer.count)
        #else
        // Elsewhere the standard library's generator is the portable secure source.
        var generator = SystemRandomNumberGenerator()
        var remaining = buffer.count
        while remaining > 0 {
            let word = generator.next()
            let count = min(remaining, 8)
            for index in 0..<count {
                next.storeBytes(of: UInt8(truncatingIfNeeded: word &>> UInt64(8 * index)), toByteOffset: index, as: UInt8.self)
            }
            next += count
            remaining -= count
        }
        #endif
    }

    /// Fills `buffer` with secure random bytes, or stops the process when the system cannot
    /// deliver them, as `SystemRandomNumberGenerator` (which the non-throwing key-generation and
    /// signing APIs used before) does: no key or signature may come from anything weaker.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        do {
            try fill(throwing: buffer)
        } catch {
            fatalError("the system's secure random source failed (errno \(error.errno))")
        }
    }

    /// Calls `body` with `count` fresh random bytes in temporary memory that is zeroed afterwards.
    static func withBytes<R>(count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: count, alignment: 16) { buffer in
            defer { if let base = buffer.baseAddress { secureZero(base, count: buffer.count) } }
            fill(buffer)
            return try body(UnsafeRawBufferPointer(buffer))
        }
    }
}
