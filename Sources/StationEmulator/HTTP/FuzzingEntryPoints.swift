import Foundation
import LoopbackHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Entry points for the libFuzzer harnesses in `Fuzz/` into the emulator's parsers, which face
/// untrusted peers: the request head, the chunked and `Content-Length` bodies, and multipart forms.
/// Not API: reached only with `@_spi(Fuzzing) import StationEmulator`.
@_spi(Fuzzing)
public enum EmulatorFuzzing {
    /// What the parsers made of one input.
    public struct Outcome: Sendable {
        /// Requests whose head parsed.
        public var requests = 0
        /// Bodies read to their end.
        public var bodies = 0
        /// Search steps the multipart parser took, and the bound it must stay within.
        public var multipartSteps = 0
        /// The most steps linear parsing allows for the body and boundary.
        public var multipartStepBound = 0
    }

    /// Feeds `bytes` to the server's request reader as if a client had sent them on one
    /// connection and closed it: heads and bodies are read (up to 1 MiB each) until the bytes run
    /// out or a request is malformed. Each body that reads whole is also parsed as multipart form
    /// data with the boundary of its `Content-Type`.
    public static func parseConnection(_ bytes: [UInt8]) -> Outcome {
        var outcome = Outcome()
        var descriptors: [Int32] = [-1, -1]
        #if canImport(Glibc)
        let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors)
        #else
        let made = socketpair(AF_UNIX, SOCK_STREAM, 0, &descriptors)
        #endif
        guard made == 0 else { return outcome }
        defer { close(descriptors[1]) }
        // A socket pair's buffer holds far more than the fuzzer's longest input.
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(descriptors[0], $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            offset += count
        }
        close(descriptors[0])
        let socket = ServerSocket(descriptor: descriptors[1])
        while let request = try? LoopbackHTTPServer.readRequest(socket, headDeadline: nil) {
            outcome.requests += 1
            guard let body = try? StationHTTPServer.readBody(request, limit: 1 << 20) else { break }
            outcome.bodies += 1
            let form = multipart(body, contentType: request.header("content-type"))
            outcome.multipartSteps += form.multipartSteps
            outcome.multipartStepBound += form.multipartStepBound
        }
        return outcome
    }

    /// Parses `body` as multipart form data with the boundary of `contentType` (when it has one)
    /// and reports the search steps taken and their linear bound.
    public static func multipart(_ body: [UInt8], contentType: String?) -> Outcome {
        var outcome = Outcome()
        guard case let .some(.some(boundary)) = MultipartParser.boundary(contentType: contentType) else { return outcome }
        _ = try? MultipartParser.parse(Data(body), boundary: boundary, steps: &outcome.multipartSteps)
        outcome.multipartStepBound = linearStepBound(bodyLength: body.count, boundaryLength: boundary.utf8.count)
        return outcome
    }

    /// The most search steps parsing a body of `bodyLength` bytes may take: twice the body (each
    /// search is linear and starts where the last ended) plus preparing the three needles.
    static func linearStepBound(bodyLength: Int, boundaryLength: Int) -> Int {
        2 * bodyLength + 6 * (boundaryLength + 4) + 16
    }
}
