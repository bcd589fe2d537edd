#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Overwrites `count` bytes at `pointer` with zeros in a way the optimizer may not remove, even when
/// the memory is freed right after (plain stores before `free` are dead stores to the compiler).
@usableFromInline
package func secureZero(_ pointer: UnsafeMutableRawPointer, count: Int) {
    guard count > 0 else { return }
    #if canImport(Darwin)
    _ = memset_s(pointer, count, 0, count)
    #else
    explicit_bzero(pointer, count)
    #endif
}

/// Zeroes a typed buffer (see ``secureZero(_:count:)``).
@usableFromInline
func secureZero<T>(_ buffer: UnsafeMutableBufferPointer<T>) {
    guard let base = buffer.baseAddress else { return }
    secureZero(UnsafeMutableRawPointer(base), count: buffer.count * MemoryLayout<T>.stride)
}
