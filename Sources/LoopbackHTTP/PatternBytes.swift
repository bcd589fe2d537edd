import Foundation
import Transport

/// Deterministic test content of any length: byte `i` is `pattern[i % period]` for a pseudo-random
/// pattern whose period (a prime) shares no factor with the power-of-two buffer sizes transports
/// use, so a lost, repeated or reordered piece shows up as a mismatch.
///
/// Filling and checking copy and compare whole runs (`memcpy`/`memcmp`), so 100 MiB is quick even
/// in debug builds.
public struct PatternBytes: Sendable {
    /// The repeat length of the pattern.
    public let period: Int
    /// Two periods back to back, so any run of up to `period` bytes is contiguous.
    private let doubled: [UInt8]

    /// A pattern derived from `seed`.
    public init(seed: UInt64, period: Int = 65_521) {
        self.period = period
        var state = seed
        var pattern = [UInt8](repeating: 0, count: period)
        for index in 0..<period {
            // SplitMix64 step.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            pattern[index] = UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
        doubled = pattern + pattern
    }

    /// Writes the content at `offset ..< offset + buffer.count` into `buffer`.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int64) {
        var done = 0
        doubled.withUnsafeBytes { source in
            while done < buffer.count {
                let phase = Int((offset + Int64(done)) % Int64(period))
                let count = min(period, buffer.count - done)
                UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[phase..<(phase + count)]))
                done += count
            }
        }
    }

    /// The content at `offset ..< offset + count`.
    public func bytes(offset: Int64, count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { fill($0, offset: offset) }
        return result
    }

    /// The content at `offset ..< offset + count`.
    public func data(offset: Int64, count: Int) -> Data {
        var result = Data(count: count)
        result.withUnsafeMutableBytes { fill($0, offset: offset) }
        return result
    }

    /// Whether `bytes` equals the content at `offset ..< offset + bytes.count`.
    public func matches(_ bytes: UnsafeRawBufferPointer, offset: Int64) -> Bool {
        var done = 0
        return doubled.withUnsafeBytes { source in
            while done < bytes.count {
                let phase = Int((offset + Int64(done)) % Int64(period))
                let count = min(period, bytes.count - done)
                guard let left = bytes.baseAddress, let right = source.baseAddress,
                      memcmp(left + done, right + phase, count) == 0
                else { return false }
                done += count
            }
            return true
        }
    }

    /// Whether `data` equals the content at `offset ..< offset + data.count`.
    public func matches(_ data: Data, offset: Int64) -> Bool {
        data.withUnsafeBytes { matches($0, offset: offset) }
    }

    /// Writes `count` bytes of content to a new file at `url`, in 1 MiB pieces.
    public func writeFile(_ url: URL, count: Int64) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset: Int64 = 0
        while offset < count {
            let piece = Int(min(1 << 20, count - offset))
            try handle.write(contentsOf: data(offset: offset, count: piece))
            offset += Int64(piece)
        }
    }

    /// A stream of `count` bytes of content in `chunkSize` pieces, generated as it is read.
    public func stream(count: Int64, chunkSize: Int = 256 * 1024) -> AsyncThrowingStream<Data, Error> {
        let pattern = self
        let cursor = Locked<Int64>(0)
        return AsyncThrowingStream {
            let offset = cursor.withLock { position -> Int64? in
                guard position < count else { return nil }
                defer { position += min(Int64(chunkSize), count - position) }
                return position
            }
            guard let offset else { return nil }
            return pattern.data(offset: offset, count: Int(min(Int64(chunkSize), count - offset)))
        }
    }
}
