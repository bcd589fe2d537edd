import Foundation
import LoopbackHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal blocking HTTP/1.1 client over one keep-alive loopback connection: the exact bytes go
/// out, and the exact status, header fields and body come back. The soak clients use it (each on its
/// own thread, so blocking calls never starve Swift's task pool), and so do the emulator's raw
/// conformance tests.
final class RawHTTPClient {
    struct Response {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
    }

    enum Failure: Error, CustomStringConvertible {
        case connect(Int32)
        case io(String)
        case malformed(String)

        var description: String {
            switch self {
            case let .connect(code): "connect failed: \(String(cString: strerror(code)))"
            case let .io(what): "I/O: \(what)"
            case let .malformed(what): "malformed response: \(what)"
            }
        }
    }

    private let port: UInt16
    /// The open connection, read and written through LoopbackHTTP's buffered socket; `nil` until
    /// the first request and after a failed one.
    private var connection: ServerSocket?

    init(port: UInt16) { self.port = port }

    deinit { disconnect() }

    func send(method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        let connection = try connected()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method != "GET" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        do {
            try (Array(head.utf8) + body).withUnsafeBytes { try connection.write($0) }
            return try readResponse(from: connection)
        } catch {
            disconnect()
            throw error
        }
    }

    /// Writes bytes as they are (connecting first if needed), for hand-made requests.
    func writeRaw(_ bytes: [UInt8]) throws {
        let connection = try connected()
        try bytes.withUnsafeBytes { try connection.write($0) }
    }

    /// Reads one response from the connection.
    func readRawResponse(bodyless: Bool = false) throws -> Response {
        guard let connection else { throw Failure.io("not connected") }
        return try readResponse(from: connection, bodyless: bodyless)
    }

    private func disconnect() {
        if let connection { close(connection.descriptor) }
        connection = nil
    }

    /// The open connection, connecting to 127.0.0.1:`port` first if there is none.
    private func connected() throws -> ServerSocket {
        if let connection { return connection }
        let socketDescriptor = LoopbackSocket.make()
        guard socketDescriptor >= 0 else { throw Failure.connect(errno) }
        guard LoopbackSocket.connects(socketDescriptor, toPort: port) else {
            let code = errno
            close(socketDescriptor)
            throw Failure.connect(code)
        }
        // ServerSocket sets TCP_NODELAY, no SIGPIPE on Darwin and 60 s send and receive limits; a
        // soak request may take longer to answer.
        let opened = ServerSocket(descriptor: socketDescriptor)
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        connection = opened
        return opened
    }

    private func readResponse(from connection: ServerSocket, bodyless: Bool = false) throws -> Response {
        let limit = 64 * 1024
        guard let statusLine = try connection.readLine(limit: limit) else {
            throw Failure.io("the server closed the connection")
        }
        let statusParts = String(decoding: statusLine, as: UTF8.self).split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed("status line") }
        var headers: [(String, String)] = []
        var length = 0
        while true {
            guard let bytes = try connection.readLine(limit: limit) else { throw Failure.malformed("no head") }
            if bytes.isEmpty { break }
            let line = String(decoding: bytes, as: UTF8.self)
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
            if name.lowercased() == "content-length" { length = Int(value) ?? 0 }
        }
        if bodyless { length = 0 }
        var body = [UInt8](repeating: 0, count: length)
        var received = 0
        while received < length {
            let count = try body.withUnsafeMutableBytes {
                try connection.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[received...]))
            }
            guard count > 0 else { throw Failure.io("the server closed the connection") }
            received += count
        }
        return Response(status: status, headers: headers, body: body)
    }
}
