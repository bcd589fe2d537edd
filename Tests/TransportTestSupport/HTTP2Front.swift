import Foundation
import LoopbackHTTP
import Transport

/// `nghttpx` (Debian's `nghttp2-proxy`) on 127.0.0.1 before a plain-HTTP/1.1 backend: a TLS
/// front that speaks HTTP/2 to clients that offer it in ALPN, and HTTP/1.1 otherwise.
///
/// It tells the backend which version the client used (`Via: 2 nghttpx` or `Via: 1.1 nghttpx`)
/// and writes one access-log line per request with the ALPN protocol and the client's port
/// (``requestLog``), so a test can see both the protocol and which requests shared a connection.
/// `scripts/install-system-deps.sh` installs it; ``start(backendPort:)`` fails, never skips, when
/// it is missing.
public final class HTTP2Front: Sendable {
    /// One request as the front logged it.
    public struct LoggedRequest: Sendable, Hashable {
        /// The protocol negotiated with the client by ALPN: `h2`, `http/1.1`, or `-` for none.
        public var alpn: String
        /// The client's TCP port: requests with the same port came over the same connection.
        public var clientPort: UInt16
        /// The request path.
        public var path: String
    }

    /// The port the front listens on.
    public let port: UInt16
    /// The fingerprint of the public key the front presents (a self-signed certificate for
    /// 127.0.0.1 and localhost).
    public let pin: PublicKeyFingerprint
    private let process: HelperProcess
    private let directory: URL
    private let accessLog: URL

    private init(port: UInt16, pin: PublicKeyFingerprint, process: HelperProcess, directory: URL, accessLog: URL) {
        self.port = port
        self.pin = pin
        self.process = process
        self.directory = directory
        self.accessLog = accessLog
    }

    /// Starts `nghttpx` before 127.0.0.1:`backendPort`, with a fresh self-signed certificate;
    /// returns once it listens.
    ///
    /// - Throws: `HelperProcessFailure` when `nghttpx` is not installed or does not start.
    public static func start(backendPort: UInt16) throws -> HTTP2Front {
        guard let executable = ["/usr/sbin/nghttpx", "/usr/bin/nghttpx", "/usr/local/bin/nghttpx"]
            .first(where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw HelperProcessFailure(
                "nghttpx is not installed: run scripts/install-system-deps.sh as root (Debian package nghttp2-proxy)")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("http2-front-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            let files = try OpenSSLTool.makeSelfSignedCertificate(in: directory)
            let pin = try PublicKeyFingerprint(pin: OpenSSLTool.publicKeyPin(of: files.certificate))
            let accessLog = directory.appendingPathComponent("access.log")
            // nghttpx cannot listen on port 0; a port just freed is taken again only by a race,
            // which a second attempt gets past.
            var failures: [String] = []
            for attempt in 1...3 {
                let port = try freeLoopbackPort()
                let process = try HelperProcess(executable, [
                    "--conf=/dev/null",  // not /etc/nghttpx/nghttpx.conf
                    "--single-process",  // one process, so stopping it leaves no worker behind
                    "--frontend=127.0.0.1,\(port)", "--backend=127.0.0.1,\(backendPort)",
                    "--workers=1", "-L", "WARN", "--no-ocsp",
                    "--accesslog-file=\(accessLog.path)",
                    "--accesslog-format=$alpn $remote_port $path",
                    files.privateKey.path, files.certificate.path,
                ], log: directory.appendingPathComponent("nghttpx-\(attempt).log"))
                if waitUntilListening(port: port, process: process, deadline: Date().addingTimeInterval(30)) {
                    return HTTP2Front(port: port, pin: pin, process: process, directory: directory, accessLog: accessLog)
                }
                process.stop()
                failures.append(process.logText)
            }
            throw HelperProcessFailure("nghttpx did not start: \(failures.joined(separator: "\n"))")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL {
        URL(string: "https://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// The requests logged so far, oldest first. nghttpx writes a line when a response ends.
    public var requestLog: [LoggedRequest] {
        let text = (try? String(contentsOf: accessLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let clientPort = UInt16(parts[1]) else { return nil }
            return LoggedRequest(alpn: String(parts[0]), clientPort: clientPort, path: String(parts[2]))
        }
    }

    /// Stops the front and removes its files. Safe to call more than once.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
func freeLoopbackPort() throws -> UInt16 {
    let probe = try LoopbackHTTPServer { _, response in try response.send(status: 503) }
    defer { probe.stop() }
    return probe.port
}
