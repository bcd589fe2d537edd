#if canImport(CCurl)
import Foundation
import Transport

/// The certificate a server presented during a TLS handshake, as reported by
/// `CurlTransport.probeServerCertificate(at:)`.
public struct ServerCertificate: Sendable, Hashable {
    /// The SHA-256 of the certificate's public key: the value to pin.
    public var publicKeyFingerprint: PublicKeyFingerprint
    /// The certificate in DER.
    public var der: Data
    /// The subject's distinguished name as libcurl prints it, for example `CN = station.local`.
    public var subject: String
    /// The issuer's distinguished name as libcurl prints it; equal to `subject` when self-signed.
    public var issuer: String
    /// The start of the validity period as libcurl prints it, for example `Jan  1 00:00:00 2026 GMT`.
    public var notBefore: String
    /// The end of the validity period, in the same form.
    public var notAfter: String
    /// How many certificates the server sent (the leaf and any intermediates).
    public var chainLength: Int

    /// Creates a certificate description.
    public init(
        publicKeyFingerprint: PublicKeyFingerprint, der: Data, subject: String, issuer: String, notBefore: String,
        notAfter: String, chainLength: Int
    ) {
        self.publicKeyFingerprint = publicKeyFingerprint
        self.der = der
        self.subject = subject
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.chainLength = chainLength
    }

    /// Builds the description from libcurl's `CURLINFO_CERTINFO` fields of the leaf certificate
    /// (`Subject:`, `Issuer:`, `Start date:`, `Expire date:`, `Cert:` with the PEM).
    ///
    /// - Returns: `nil` when the fields hold no PEM certificate whose public key can be found.
    static func fromCertInfo(_ fields: [String], chainLength: Int) -> ServerCertificate? {
        var values: [String: String] = [:]
        for field in fields {
            guard let colon = field.firstIndex(of: ":") else { continue }
            values[String(field[..<colon])] = String(field[field.index(after: colon)...])
        }
        guard let pem = values["Cert"], let der = derFromPEM(pem),
              let fingerprint = try? PublicKeyFingerprint(certificateDER: der)
        else { return nil }
        return ServerCertificate(
            publicKeyFingerprint: fingerprint, der: der, subject: values["Subject"] ?? "", issuer: values["Issuer"] ?? "",
            notBefore: values["Start date"] ?? "", notAfter: values["Expire date"] ?? "", chainLength: chainLength
        )
    }

    /// The DER inside a `-----BEGIN CERTIFICATE-----` block.
    static func derFromPEM(_ pem: String) -> Data? {
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        guard let start = pem.range(of: begin), let stop = pem.range(of: end, range: start.upperBound..<pem.endIndex)
        else { return nil }
        let base64 = pem[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64))
    }
}
#endif
