import Foundation

/// The system `openssl` command, for making test certificates and computing the values a TLS
/// client must agree with independently of the code under test.
public enum OpenSSLTool {
    /// A certificate and its private key, both PEM files.
    public struct CertificateFiles: Sendable {
        /// The certificate (PEM).
        public let certificate: URL
        /// The private key (PEM, unencrypted).
        public let privateKey: URL
    }

    /// The key algorithm of a generated certificate.
    public enum KeyType: Sendable {
        /// ECDSA on P-256.
        case ecP256
        /// RSA with 2048-bit modulus.
        case rsa2048

        var arguments: [String] {
            switch self {
            case .ecP256: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
            case .rsa2048: ["-newkey", "rsa:2048"]
            }
        }
    }

    /// Why an `openssl` run failed.
    public struct Failure: Error, CustomStringConvertible {
        /// The arguments given to `openssl`.
        public let arguments: [String]
        /// The exit status.
        public let status: Int32
        /// What `openssl` wrote to standard error.
        public let stderr: String

        /// The command, its exit status and its standard error.
        public var description: String { "openssl \(arguments.joined(separator: " ")) exited \(status): \(stderr)" }
    }

    /// Runs `openssl` with `arguments` and returns its standard output.
    /// - Throws: `Failure` on a non-zero exit, or launch errors; `HelperProcessFailure` where no
    ///   program starts (iOS, tvOS, watchOS, visionOS: the tests that need `openssl` are skipped there).
    @discardableResult
    public static func run(_ arguments: [String]) throws -> Data {
        #if os(macOS) || os(Linux)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let output = Pipe()
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("openssl-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        process.standardOutput = output
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? errorHandle.close()
        guard process.terminationStatus == 0 else {
            let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw Failure(arguments: arguments, status: process.terminationStatus, stderr: stderr)
        }
        return data
        #else
        throw HelperProcessFailure("openssl cannot be started: this platform starts no programs")
        #endif
    }

    /// A self-signed certificate for `127.0.0.1` and `localhost`, valid for two days.
    public static func makeSelfSignedCertificate(in directory: URL, name: String = "self-signed",
                                                 keyType: KeyType = .ecP256) throws -> CertificateFiles {
        let files = CertificateFiles(certificate: directory.appendingPathComponent("\(name).pem"),
                                     privateKey: directory.appendingPathComponent("\(name)-key.pem"))
        try run(["req", "-x509"] + keyType.arguments + [
            "-nodes", "-keyout", files.privateKey.path, "-out", files.certificate.path, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        return files
    }

    /// A self-signed certificate made exactly as upstream's `run.py` makes a station's:
    /// `openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 365
    /// -subj /CN=cipherstation`, with no subjectAltName (so only a pin can make a client trust it).
    /// Writes `cert.pem` and `key.pem` in `directory`.
    public static func makeRunPyCertificate(in directory: URL) throws -> CertificateFiles {
        let files = CertificateFiles(certificate: directory.appendingPathComponent("cert.pem"),
                                     privateKey: directory.appendingPathComponent("key.pem"))
        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", files.privateKey.path,
                 "-out", files.certificate.path, "-days", "365", "-subj", "/CN=cipherstation"])
        return files
    }

    /// A certificate authority (self-signed, `CA:TRUE`), valid for two days.
    public static func makeCertificateAuthority(in directory: URL, name: String = "ca") throws -> CertificateFiles {
        let files = CertificateFiles(certificate: directory.appendingPathComponent("\(name).pem"),
                                     privateKey: directory.appendingPathComponent("\(name)-key.pem"))
        try run(["req", "-x509"] + KeyType.ecP256.arguments + [
            "-nodes", "-keyout", files.privateKey.path, "-out", files.certificate.path, "-days", "2",
            "-subj", "/CN=Cipher Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        return files
    }

    /// A server certificate for `127.0.0.1` and `localhost` signed by `authority`.
    public static func makeServerCertificate(in directory: URL, name: String = "server",
                                             signedBy authority: CertificateFiles) throws -> CertificateFiles {
        let files = CertificateFiles(certificate: directory.appendingPathComponent("\(name).pem"),
                                     privateKey: directory.appendingPathComponent("\(name)-key.pem"))
        let request = directory.appendingPathComponent("\(name).csr")
        let extensions = directory.appendingPathComponent("\(name).ext")
        try Data("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".utf8).write(to: extensions)
        try run(["req", "-new"] + KeyType.ecP256.arguments + [
            "-nodes", "-keyout", files.privateKey.path, "-out", request.path, "-subj", "/CN=localhost",
        ])
        try run([
            "x509", "-req", "-in", request.path, "-CA", authority.certificate.path, "-CAkey", authority.privateKey.path,
            "-CAcreateserial", "-CAserial", directory.appendingPathComponent("\(name).srl").path,
            "-out", files.certificate.path, "-days", "2", "-extfile", extensions.path,
        ])
        return files
    }

    /// The certificate's public-key pin, base64 of SHA-256 over the DER `SubjectPublicKeyInfo`, the
    /// way libcurl's documentation computes it:
    /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
    public static func publicKeyPin(of certificate: URL) throws -> String {
        let directory = certificate.deletingLastPathComponent()
        let stem = certificate.deletingPathExtension().lastPathComponent
        let publicKeyPEM = directory.appendingPathComponent("\(stem)-pub.pem")
        let publicKeyDER = directory.appendingPathComponent("\(stem)-pub.der")
        try run(["x509", "-in", certificate.path, "-pubkey", "-noout", "-out", publicKeyPEM.path])
        try run(["pkey", "-pubin", "-in", publicKeyPEM.path, "-outform", "der", "-out", publicKeyDER.path])
        let digest = try run(["dgst", "-sha256", "-binary", publicKeyDER.path])
        return digest.base64EncodedString()
    }

    /// The certificate in DER.
    public static func certificateDER(of certificate: URL) throws -> Data {
        try run(["x509", "-in", certificate.path, "-outform", "der"])
    }
}

/// `openssl s_server -www` on 127.0.0.1 with a given certificate: a real TLS peer for client tests.
/// Every `GET` gets `200` with an HTML status page.
public final class OpenSSLTLSServer: Sendable {
    /// The port it listens on.
    public let port: UInt16
    private let process: HelperProcess

    /// Starts the server and waits (up to 30 s) until it listens.
    /// - Throws: `OpenSSLTool.Failure` if it exits or never reports its port.
    public init(serving files: OpenSSLTool.CertificateFiles, logDirectory: URL) throws {
        let arguments = ["s_server", "-www", "-accept", "127.0.0.1:0", "-cert", files.certificate.path,
                         "-key", files.privateKey.path]
        // Standard input stays open: s_server must not see its end.
        process = try HelperProcess("openssl", arguments,
                                    log: logDirectory.appendingPathComponent("s_server-\(UUID().uuidString).log"))
        let deadline = Date().addingTimeInterval(30)
        var found: UInt16?
        while found == nil, Date() < deadline, process.isRunning {
            // "ACCEPT 127.0.0.1:40123"
            if let line = process.logText.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
               let portText = line.split(separator: ":").last {
                found = UInt16(portText.trimmingCharacters(in: .whitespaces))
            }
            if found == nil { usleep(50_000) }
        }
        guard let found else {
            process.stop()
            throw OpenSSLTool.Failure(arguments: arguments, status: -1, stderr: "no ACCEPT line: \(process.logText)")
        }
        port = found
    }

    deinit { stop() }

    /// `https://127.0.0.1:<port>/`.
    public var url: URL { URL(string: "https://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    /// Stops the server.
    public func stop() { process.stop() }
}
