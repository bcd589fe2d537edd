#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking

/// The `InputStream` FoundationNetworking reads a file request body (or a spooled stream) from.
///
/// FoundationNetworking has no bound stream pair (`Stream.getBoundStreams` is compiled out), and it
/// reads a body stream from libcurl's read callback on the serial queue all its sessions share,
/// taking a stream with no bytes available to have ended. So this stream reports bytes available
/// until the body's real end, and its source must be a file: a read never waits for anyone.
/// Reading the file ourselves (rather than `uploadTask(with:fromFile:)`) keeps the size taken at
/// the start as the `Content-Length` and fails a file that shrinks meanwhile.
final class BodyInputStream: InputStream {
    private let source: any BlockingBodySource
    // Touched only by the thread URLSession reads the body on.
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    init(source: any BlockingBodySource) {
        self.source = source
        super.init(data: Data())
    }

    override func open() { status = .open }

    override func close() { status = .closed }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { failure }

    /// True until the end: FoundationNetworking ends the upload at the first `false`.
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return status == .atEnd ? 0 : -1 }
        switch source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: length)) {
        case .bytes(let count):
            return count
        case .end:
            status = .atEnd
            return 0
        case .failed:
            status = .error
            failure = CocoaError(.fileReadUnknown)
            return -1
        }
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                            length: UnsafeMutablePointer<Int>) -> Bool { false }
}
#endif
