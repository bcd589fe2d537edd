import Foundation
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
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []

    init(port: UInt16) { self.port = port }

    deinit { if descriptor >= 0 { close(descriptor) } }

    func send(method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        if descriptor < 0 { try connect() }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method != "GET" || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        do {
            try write(Array(head.utf8) + body)
            return try readResponse()
        } catch {
            close(descriptor)
            descriptor = -1
            buffer = []
            throw error
        }
    }

    /// Writes bytes as they are (connecting first if needed), for hand-made requests.
    func writeRaw(_ bytes: [UInt8]) throws {
        if descriptor < 0 { try connect() }
        try write(bytes)
    }

    /// Reads one response from the connection.
    func readRawResponse(bodyless: Bool = false) throws -> Response { try readResponse(bodyless: bodyless) }

    private func connect() throws {
        #if canImport(Glibc)
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socketDescriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socketDescriptor >= 0 else { throw Failure.connect(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connectSocket(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            let code = errno
            close(socketDescriptor)
            throw Failure.connect(code)
        }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        _ = setsockopt(socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        // Darwin has no MSG_NOSIGNAL: a write to a server that left must fail, not raise SIGPIPE.
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        descriptor = socketDescriptor
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { sendWithoutSignal(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure.io("send: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[0..<count]
                return
            }
            if count == 0 { throw Failure.io("the server closed the connection") }
            if errno == EINTR { continue }
            throw Failure.io("recv: \(String(cString: strerror(errno)))")
        }
    }

    private func readResponse(bodyless: Bool = false) throws -> Response {
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 {
                for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10
                    && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                    headEnd = index
                    break
                }
            }
            if headEnd == nil { try fill() }
        }
        guard let headEnd else { throw Failure.malformed("no head") }
        let lines = String(decoding: buffer[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure.malformed("status line") }
        var headers: [(String, String)] = []
        var length = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]), value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
            if name.lowercased() == "content-length" { length = Int(value) ?? 0 }
        }
        buffer.removeFirst(headEnd + 4)
        if bodyless { length = 0 }
        while buffer.count < length { try fill() }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }
}

// The libc calls under names of their own: inside `RawHTTPClient`, `connect` and `send` would name
// its methods.

/// `connect(2)`.
private func connectSocket(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}

/// `send(2)` that never raises SIGPIPE (MSG_NOSIGNAL on Linux; SO_NOSIGPIPE is set on Darwin sockets).
private func sendWithoutSignal(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
    #else
    send(descriptor, bytes, count, 0)
    #endif
}
