import Foundation
import Transport

/// A streamed request body for the thread URLSession reads the body on: Transport's
/// `RequestBodyPipe` (which both transports use), read with blocking calls that wait at most
/// `idleLimit` seconds for the producer.
final class StreamBodyPipe: BlockingBodySource, Sendable {
    let pipe: RequestBodyPipe
    private let idleLimit: TimeInterval?

    /// - Parameter onFailure: told once why the body failed (kind, message, underlying error).
    init(declaredLength: Int64?, highWater: Int, idleLimit: TimeInterval?,
         onFailure: @escaping @Sendable (TransportError.Kind, String, (any Error)?) -> Void) {
        pipe = RequestBodyPipe(declaredLength: declaredLength, highWater: highWater) { failure in
            onFailure(failure.kind, failure.message, failure.underlying)
        }
        self.idleLimit = idleLimit
    }

    private init(pipe: RequestBodyPipe, idleLimit: TimeInterval?) {
        self.pipe = pipe
        self.idleLimit = idleLimit
    }

    /// A new, empty pipe like this one, for the body sent again from its first byte.
    func fresh() -> StreamBodyPipe { StreamBodyPipe(pipe: pipe.fresh(), idleLimit: idleLimit) }

    /// Starts reading `stream` in a task of its own.
    func start(_ stream: HTTPBodyStream) { pipe.start(stream) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyRead {
        switch pipe.read(into: buffer, idleLimit: idleLimit) {
        case .bytes(let count): .bytes(count)
        case .end: .end
        case .failed, .wouldBlock: .failed
        }
    }

    func close() { pipe.close() }
}
