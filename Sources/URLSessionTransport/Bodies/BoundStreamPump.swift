#if !canImport(FoundationNetworking)
import Foundation

/// Hands a request body to Darwin's URLSession through a bound stream pair: URLSession reads the
/// input half, and a thread of ours copies the body source into the output half.
///
/// Darwin's URLSession cannot read a custom `InputStream` subclass (it schedules the stream on a
/// run loop through private methods), so the bound pair is the supported path. The thread blocks on
/// the source and on the pair's bounded buffer, never on a Swift concurrency thread.
enum BoundStreamPump {
    /// An input stream that yields `source`'s bytes, or `nil` if no stream pair could be made.
    static func inputStream(reading source: any BlockingBodySource, bufferSize: Int) -> InputStream? {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: bufferSize, inputStream: &input, outputStream: &output)
        guard let input, let output else { return nil }
        let writer = Writer(source: source, output: output, chunkSize: bufferSize)
        let thread = Thread { writer.run() }
        thread.name = "URLSessionTransport body"
        thread.start()
        return input
    }

    /// Owns the output half; used by its one thread only, hence the unchecked `Sendable`.
    private final class Writer: @unchecked Sendable {
        private let source: any BlockingBodySource
        private let output: OutputStream
        private let chunkSize: Int

        init(source: any BlockingBodySource, output: OutputStream, chunkSize: Int) {
            self.source = source
            self.output = output
            self.chunkSize = max(4096, chunkSize)
        }

        func run() {
            output.open()
            defer { output.close() }
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            while true {
                let result = buffer.withUnsafeMutableBytes { source.read(into: $0) }
                // .end: the body is complete. .failed: the transfer was told why and cancels itself.
                guard case .bytes(let count) = result else { return }
                guard writeAll(buffer, count: count) else {
                    source.close()
                    return
                }
            }
        }

        private func writeAll(_ buffer: [UInt8], count: Int) -> Bool {
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBufferPointer { bytes -> Int in
                    guard let base = bytes.baseAddress else { return -1 }
                    return output.write(base + offset, maxLength: count - offset)
                }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}
#endif
