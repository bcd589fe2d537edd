import Foundation

/// What a blocking read of a request body yields.
enum BodyRead: Equatable {
    /// This many bytes were copied into the buffer (more than zero).
    case bytes(Int)
    /// The body is complete.
    case end
    /// The body could not be read; the transfer has been told why.
    case failed
}

/// A request body read with blocking calls, by the thread URLSession reads the body on.
protocol BlockingBodySource: AnyObject, Sendable {
    /// Copies the next bytes into `buffer`, waiting until some are there.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyRead
    /// The transfer is over: wake any waiting read and release what is held.
    func close()
}
