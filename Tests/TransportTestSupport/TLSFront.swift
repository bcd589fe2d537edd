import Foundation
import LoopbackHTTP
import Transport

/// A TLS front on 127.0.0.1 before a plain-HTTP backend (a `LoopbackHTTPServer`, the emulator):
/// `scripts/tls-front.py` terminates TLS and pipes the bytes through, so a client meets real TLS
/// the way it meets a station behind run.py's self-signed certificate.
///
///     let backend = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
///     let front = try TLSFront.start(backendPort: backend.port, certificate: .runPyStyle)
///     defer { front.stop() }
///     // GET front.url("/") pinned to front.pin
///
/// A shell script starts the same front with
/// `python3 scripts/tls-front.py --backend-port PORT --make-self-signed DIR` (see the script).
public final class TLSFront: Sendable {
    /// Which certificate the front presents.
    public enum Certificate: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Self-signed exactly as upstream's run.py makes it (RSA 2048, `CN=cipherstation`, no
        /// subjectAltName): a client reaches it only by pinning its key.
        case runPyStyle
        /// Signed by a fresh local test CA, for `127.0.0.1` (subjectAltName `IP:127.0.0.1`, plus
        /// `DNS:localhost`): for clients that can only trust a CA, given ``caFile``.
        case testCA

        /// The case name.
        public var description: String { rawValue }
    }

    /// The port the front listens on.
    public let port: UInt16
    /// The fingerprint of the public key the front presents.
    public let pin: PublicKeyFingerprint
    /// The certificate and key the front serves.
    public let files: OpenSSLTool.CertificateFiles
    /// The CA certificate (PEM) that signed the front's certificate, to trust as a CA bundle;
    /// `nil` for ``Certificate/runPyStyle``.
    public let caFile: URL?
    private let process: HelperProcess
    private let directory: URL

    private init(port: UInt16, pin: PublicKeyFingerprint, files: OpenSSLTool.CertificateFiles, caFile: URL?,
                 process: HelperProcess, directory: URL) {
        self.port = port
        self.pin = pin
        self.files = files
        self.caFile = caFile
        self.process = process
        self.directory = directory
    }

    /// Makes the certificate with the system `openssl` and starts the front before
    /// 127.0.0.1:`backendPort`; returns once it listens.
    ///
    /// - Throws: `OpenSSLTool.Failure` when a certificate cannot be made, `HelperProcessFailure`
    ///   when the front does not start (no `python3`, say).
    public static func start(backendPort: UInt16, certificate: Certificate, port: UInt16 = 0) throws -> TLSFront {
        try start(backendPort: backendPort, port: port) { directory in
            switch certificate {
            case .runPyStyle:
                return (try OpenSSLTool.makeRunPyCertificate(in: directory), nil)
            case .testCA:
                let authority = try OpenSSLTool.makeCertificateAuthority(in: directory)
                return (try OpenSSLTool.makeServerCertificate(in: directory, signedBy: authority), authority.certificate)
            }
        }
    }

    /// Starts a front presenting the same certificate and key as `other` (a copy of its files),
    /// before 127.0.0.1:`backendPort`, on `port` (0: any free one): the same station at another
    /// address.
    ///
    /// - Throws: as ``start(backendPort:certificate:port:)``.
    public static func start(backendPort: UInt16, sameKeyAs other: TLSFront, port: UInt16 = 0) throws -> TLSFront {
        try start(backendPort: backendPort, port: port) { directory in
            let certificate = directory.appendingPathComponent("cert.pem"), key = directory.appendingPathComponent("key.pem")
            try FileManager.default.copyItem(at: other.files.certificate, to: certificate)
            try FileManager.default.copyItem(at: other.files.privateKey, to: key)
            var caFile: URL?
            if let otherCA = other.caFile {
                caFile = directory.appendingPathComponent("ca.pem")
                try FileManager.default.copyItem(at: otherCA, to: caFile!)
            }
            return (OpenSSLTool.CertificateFiles(certificate: certificate, privateKey: key), caFile)
        }
    }

    private static func start(
        backendPort: UInt16, port requestedPort: UInt16,
        makeFiles: (URL) throws -> (OpenSSLTool.CertificateFiles, URL?)
    ) throws -> TLSFront {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tls-front-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            let (files, caFile) = try makeFiles(directory)
            let pin = try PublicKeyFingerprint(pin: OpenSSLTool.publicKeyPin(of: files.certificate))
            let script = packageRoot.appendingPathComponent("scripts/tls-front.py")
            let process = try HelperProcess("python3", [
                script.path, "--backend-port", "\(backendPort)", "--cert", files.certificate.path,
                "--key", files.privateKey.path, "--port", "\(requestedPort)", "--exit-on-stdin-eof",
            ], log: directory.appendingPathComponent("tls-front.log"), readOutput: true)
            // "LISTENING <port>", printed once the socket listens.
            guard let line = process.readOutputLine(), line.hasPrefix("LISTENING "),
                  let port = UInt16(line.dropFirst("LISTENING ".count))
            else {
                process.stop()
                throw HelperProcessFailure("scripts/tls-front.py did not start: \(process.logText)")
            }
            return TLSFront(port: port, pin: pin, files: files, caFile: caFile, process: process, directory: directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port>/`.
    public var url: URL { url("/") }

    /// `https://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL {
        URL(string: "https://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// Stops the front and removes its certificates. Safe to call more than once.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
