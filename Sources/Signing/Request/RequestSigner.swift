#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto
import ClassicalCrypto
import SHA2

/// Signs requests for a ``SigningIdentity``: returns the six `x-cipher-*` headers for a method,
/// path and body.
///
/// The signature is pure ML-DSA-65 (FIPS 204) with an empty context over ``CanonicalRequest``,
/// made by the identity's signing key (hedged with the pure-Swift key). The clock and the nonce source can be replaced for tests; the defaults
/// are the system clock and 16 bytes from the system's secure random source as 32 lowercase hex.
public struct RequestSigner: Sendable {
    /// The identity that signs.
    public let identity: SigningIdentity
    private let clock: @Sendable () -> Int64
    private let nonceSource: @Sendable () -> String

    /// Creates a signer.
    ///
    /// - Parameters:
    ///   - identity: who signs: the station uid, this device's uid and its ML-DSA-65 signing key.
    ///   - clock: Unix time in whole seconds, read once per request (the station allows 60 s of
    ///     skew either way).
    ///   - nonceSource: a fresh nonce per request; the station refuses a nonce it has seen from
    ///     this device in the last 24 hours.
    public init(
        identity: SigningIdentity,
        clock: @escaping @Sendable () -> Int64 = RequestSigner.systemClock,
        nonceSource: @escaping @Sendable () -> String = RequestSigner.randomNonce
    ) {
        self.identity = identity
        self.clock = clock
        self.nonceSource = nonceSource
    }

    /// The current Unix time in whole seconds.
    @Sendable public static func systemClock() -> Int64 {
        Int64(Date().timeIntervalSince1970.rounded(.down))
    }

    /// 16 bytes from the system's secure random source, as 32 lowercase hex characters.
    @Sendable public static func randomNonce() -> String {
        Hex.encode(SecureRandom.bytes(count: 16))
    }

    /// Signs a request with the body in memory.
    ///
    /// - Parameters:
    ///   - method: the HTTP method (sent as is; signed uppercased).
    ///   - path: the request target exactly as it will be sent: path and optional query string,
    ///     percent-encoded. The station signs over ``CanonicalRequest/stationPath(requestTarget:)``.
    ///   - body: the exact body bytes that will be sent (empty for GET).
    /// - Throws: ``SigningError``.
    public func sign(method: String, path: String, body: some DataProtocol) throws(SigningError) -> SignedRequestHeaders {
        try sign(method: method, path: path, bodySHA256: SHA256.hash(data: body))
    }

    /// Signs a request whose body's SHA-256 was computed separately, for bodies streamed from disk
    /// (hash them with `SHA2.SHA256` while producing the exact bytes to send).
    ///
    /// - Throws: ``SigningError/invalidBodyDigestLength(_:)`` unless the digest is 32 bytes, and
    ///   the other ``SigningError`` cases as ``sign(method:path:body:)``.
    public func sign(method: String, path: String, bodySHA256: some DataProtocol) throws(SigningError) -> SignedRequestHeaders {
        guard bodySHA256.count == SHA256.byteCount else { throw .invalidBodyDigestLength(bodySHA256.count) }
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenCharacter) else { throw .invalidMethod(method) }
        guard path.utf8.first == UInt8(ascii: "/"),
              path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
            throw .invalidPath(path)
        }
        let timestamp = String(clock())
        let nonce = nonceSource()
        for (name, value) in [
            (SignedRequestHeaders.uidName, identity.uid), (SignedRequestHeaders.deviceName, identity.deviceUID),
            (SignedRequestHeaders.nonceName, nonce),
        ] where !Self.isSafeHeaderValue(value) {
            throw .invalidHeaderValue(name: name, value: value)
        }
        let bodyHash = Hex.encode(bodySHA256)
        let canonical = CanonicalRequest(
            method: method, path: CanonicalRequest.stationPath(requestTarget: path), uid: identity.uid,
            deviceUID: identity.deviceUID, timestamp: timestamp, nonce: nonce, bodySHA256: bodyHash)
        let signature: Data
        do {
            signature = try identity.signingKey.signature(for: canonical.bytes)
        } catch let error as PQCryptoError {
            throw .signingFailed(error)
        } catch {
            throw .signingKeyFailed(String(describing: error))
        }
        return SignedRequestHeaders(
            uid: identity.uid, device: identity.deviceUID, timestamp: timestamp, nonce: nonce, bodySHA256: bodyHash,
            signature: signature.base64EncodedString())
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// Non-empty printable ASCII without leading or trailing spaces: what survives an HTTP
    /// server's header parsing unchanged, so the station signs over the same value.
    private static func isSafeHeaderValue(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard let first = bytes.first, let last = bytes.last, first != 0x20, last != 0x20 else { return false }
        return bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
