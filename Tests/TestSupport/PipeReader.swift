import Foundation

/// Reads a pipe to its end on a dedicated thread.
public final class PipeReader: @unchecked Sendable {
    private let lock = NSCondition()
    private var data: Data?

    /// Starts reading `pipe` on a thread of its own.
    public init(_ pipe: Pipe) {
        Thread.detachNewThread { [self] in
            let read = pipe.fileHandleForReading.readDataToEndOfFile()
            lock.lock()
            data = read
            lock.broadcast()
            lock.unlock()
        }
    }

    private func current() -> Data? {
        lock.lock()
        defer { lock.unlock() }
        return data
    }

    /// The bytes read, once the writer closed the pipe (polled so no pool thread blocks).
    public func result() async -> Data {
        while true {
            if let value = current() { return value }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
    }
}
