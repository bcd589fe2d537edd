import Foundation
import SHA2
import ErrorKinds

/// The SHA-256 of a server's DER-encoded public key (its X.509 `SubjectPublicKeyInfo`): the value
/// certificate pinning compares.
///
/// This is the fingerprint HPKP and libcurl's `CURLOPT_PINNEDPUBLICKEY` use, written
/// `sha256//<base64>`. The same value comes from
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
/// Pinning the key rather than the certificate keeps the pin valid when a station renews its
/// self-signed certificate with the same key.
public struct PublicKeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let sha256: [UInt8]

    /// A fingerprint from its 32 digest bytes.
    ///
    /// - Throws: `PublicKeyFingerprint.ParseError.wrongLength` unless there are exactly 32 bytes.
    public init(sha256: [UInt8]) throws {
        guard sha256.count == 32 else { throw ParseError.wrongLength(sha256.count) }
        self.sha256 = sha256
    }

    /// Parses the pin form `sha256//<base64>` or the bare base64 of the digest.
    ///
    /// - Throws: `PublicKeyFingerprint.ParseError` when the text is not base64 or not 32 bytes.
    public init(pin: String) throws {
        var text = pin.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("sha256//") { text.removeFirst("sha256//".count) }
        guard let data = Data(base64Encoded: text) else { throw ParseError.notBase64 }
        try self.init(sha256: [UInt8](data))
    }

    /// Computes the fingerprint of the public key in a DER-encoded X.509 certificate.
    ///
    /// - Throws: `PublicKeyFingerprint.ParseError.malformedCertificate` when the bytes are not a
    ///   certificate this reader can walk to its `SubjectPublicKeyInfo`.
    public init(certificateDER: some Collection<UInt8>) throws {
        let der = [UInt8](certificateDER)
        guard let spki = DERReader.subjectPublicKeyInfo(inCertificate: der) else {
            throw ParseError.malformedCertificate
        }
        try self.init(sha256: SHA256.hash(data: der[spki]))
    }

    /// The digest in standard base64 (44 characters).
    public var base64: String { Data(sha256).base64EncodedString() }

    /// The pin form libcurl and HPKP use: `sha256//<base64>`.
    public var pinString: String { "sha256//" + base64 }

    /// The pin form, `sha256//<base64>`.
    public var description: String { pinString }

    /// Why a fingerprint could not be read.
    ///
    /// A struct rather than an enum, so a kind added in a later release does not break an app's
    /// `switch`: switch over ``kind`` (`case .wrongLength:`, ending with `default:`) and read the details
    /// from the properties. Two errors are equal when their kind and details are equal.
    public struct ParseError: KindedError, Sendable {
        /// What went wrong, without the details: compare it or `switch` over it (`case .wrongLength:`).
        public typealias Kind = ErrorKind<PublicKeyFingerprint.ParseError>

        private enum Detail: Hashable, Sendable {
            case wrongLength(Int)
            case notBase64
            case malformedCertificate
        }

        /// What went wrong.
        public let kind: Kind
        private let detail: Detail

        private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

        /// The digest is not 32 bytes (the count found).
        public static func wrongLength(_ count: Int) -> ParseError { ParseError(.wrongLength(count), .wrongLength) }

        /// The text is not base64.
        public static let notBase64 = ParseError(.notBase64, .notBase64)

        /// The certificate is not DER this reader can walk to its public key.
        public static let malformedCertificate = ParseError(.malformedCertificate, .malformedCertificate)

        /// The byte count found, for `Kind.wrongLength`.
        public var count: Int? { if case .wrongLength(let value) = detail { value } else { nil } }

        /// The kind and its detail, as printed when this type was an enum: `"wrongLength(31)"`.
        public var description: String { count.map { "\(kind)(\($0))" } ?? "\(kind)" }
    }
}

extension ErrorKind where Failure == PublicKeyFingerprint.ParseError {
    /// The digest is not 32 bytes (the count found).
    public static var wrongLength: Self { Self() }
    /// The text is not base64.
    public static var notBase64: Self { Self() }
    /// The certificate is not DER this reader can walk to its public key.
    public static var malformedCertificate: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.wrongLength, .notBase64, .malformedCertificate] }
}
