import Foundation
import PQCrypto
import ClassicalCrypto
import SHA2
import TestSupport
import Testing

@testable import Signing

@Suite("Signing: canonical string and signer")
struct RequestSignerTests {
    @Test func canonicalStringIsSevenLines() {
        let canonical = CanonicalRequest(
            method: "post", path: "/post", uid: "U", deviceUID: "Dev-1", timestamp: "1700000000", nonce: "n0",
            bodySHA256: "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855")
        #expect(canonical.string == "POST\n/post\nU\nDev-1\n1700000000\nn0\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(canonical.bytes == Array(canonical.string.utf8))
    }

    @Test func stationPathDropsQueryAndDecodes() {
        let cases: [(String, String)] = [
            ("/post", "/post"), ("/content/QmVwHk?x=1&y=2", "/content/QmVwHk"), ("/a%20b", "/a b"),
            ("/a%3Fb", "/a"), ("/a%23b", "/a"), ("/a%09b%0D%0Ac", "/abc"), ("/a%zz", "/a%zz"), ("/a%4", "/a%4"),
            ("/%C3%A9", "/é"), ("/%FF", "/\u{FFFD}"), ("/", "/"), ("/?", "/"), ("/x/", "/x/"),
        ]
        for (target, path) in cases {
            #expect(CanonicalRequest.stationPath(requestTarget: target) == path, "\(target)")
        }
    }

    @Test func signerProducesTheSixHeaders() throws {
        let fixture = try Fixture()
        let body = Array("{\"uid\":\"U\"}".utf8)
        let headers = try fixture.signer.sign(method: "POST", path: "/rewrap", body: body)
        #expect(headers.uid == SignedRequestValues.stationUID)
        #expect(headers.device == SignedRequestValues.deviceUID)
        #expect(headers.timestamp == "1795956595")
        #expect(headers.nonce == "0123456789abcdef0123456789abcdef")
        #expect(headers.bodySHA256 == SHA256.hash(data: body).hex)
        #expect(headers.signature.count == 4412)
        let signature = try #require(Data(base64Encoded: headers.signature))
        #expect(signature.count == 3309)
        let canonical = CanonicalRequest(
            method: "POST", path: "/rewrap", uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID,
            timestamp: "1795956595", nonce: headers.nonce, bodySHA256: headers.bodySHA256)
        #expect(fixture.identity.publicKey.isValidSignature(signature, for: canonical.bytes))
        // Pure ML-DSA with an empty context: a non-empty context does not verify.
        #expect(!fixture.identity.publicKey.isValidSignature(signature, for: canonical.bytes, context: [1]))
        #expect(headers.fields.map(\.name) == SignedRequestHeaders.names)
        #expect(headers.dictionary["x-cipher-sig"] == headers.signature)
        #expect(SignedRequestHeaders.names == [
            "x-cipher-uid", "x-cipher-device", "x-cipher-ts", "x-cipher-nonce", "x-cipher-body-sha256", "x-cipher-sig",
        ])
    }

    @Test func getSignsTheEmptyBodyHashAndThePathWithoutQuery() throws {
        let fixture = try Fixture()
        let headers = try fixture.signer.sign(method: "get", path: "/content/QmAbc?download=1", body: Data())
        #expect(headers.bodySHA256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let canonical = CanonicalRequest(
            method: "GET", path: "/content/QmAbc", uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID,
            timestamp: headers.timestamp, nonce: headers.nonce, bodySHA256: headers.bodySHA256)
        #expect(fixture.identity.publicKey.isValidSignature(try #require(Data(base64Encoded: headers.signature)), for: canonical.bytes))
    }

    /// Hedged signing: the same request signed twice gives two different valid signatures.
    @Test func signaturesAreHedged() throws {
        let fixture = try Fixture()
        let first = try fixture.signer.sign(method: "GET", path: "/followers", body: [UInt8]())
        let second = try fixture.signer.sign(method: "GET", path: "/followers", body: [UInt8]())
        #expect(first.signature != second.signature)
        let unsigned = { (headers: SignedRequestHeaders) in headers.fields.filter { $0.name != "x-cipher-sig" }.map(\.value) }
        #expect(unsigned(first) == unsigned(second))
    }

    @Test func defaultNonceAndClock() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 3, count: 32))
        let signer = RequestSigner(identity: SigningIdentity(uid: "U", deviceUID: "D", privateKey: key))
        let first = try signer.sign(method: "GET", path: "/following", body: [UInt8]())
        let second = try signer.sign(method: "GET", path: "/following", body: [UInt8]())
        for nonce in [first.nonce, second.nonce] {
            #expect(nonce.count == 32)
            #expect(nonce.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        }
        #expect(first.nonce != second.nonce)
        let now = Int64(Date().timeIntervalSince1970)
        #expect(abs((Int64(first.timestamp) ?? 0) - now) <= 2)
    }

    @Test func precomputedBodyDigest() throws {
        let fixture = try Fixture()
        let body = [UInt8](repeating: 0x2A, count: 5000)
        var hasher = SHA256()
        hasher.update(data: body[..<1234])
        hasher.update(data: body[1234...])
        let streamed = try fixture.signer.sign(method: "POST", path: "/post", bodySHA256: hasher.finalize())
        #expect(streamed.bodySHA256 == SHA256.hash(data: body).hex)
        #expect(throws: SigningError.invalidBodyDigestLength(31)) {
            try fixture.signer.sign(method: "POST", path: "/post", bodySHA256: [UInt8](repeating: 0, count: 31))
        }
    }

    @Test func invalidInputsAreRejected() throws {
        let fixture = try Fixture()
        for method in ["", "GE T", "GET\n", "PÖST"] {
            #expect(throws: SigningError.invalidMethod(method)) { try fixture.signer.sign(method: method, path: "/post", body: [UInt8]()) }
        }
        for path in ["", "post", "/a b", "/é", "/a#b", "/a\tb", "http://host/post"] {
            #expect(throws: SigningError.invalidPath(path)) { try fixture.signer.sign(method: "GET", path: path, body: [UInt8]()) }
        }
        let key = fixture.privateKey
        for (uid, device) in [("", "D"), ("U", ""), (" U", "D"), ("U", "D "), ("U\n", "D"), ("U", "Dé")] {
            let signer = RequestSigner(identity: SigningIdentity(uid: uid, deviceUID: device, privateKey: key))
            let expected: SigningError = Array(uid.utf8).allSatisfy({ $0 > 0x20 && $0 < 0x7F }) && !uid.isEmpty
                ? .invalidHeaderValue(name: "x-cipher-device", value: device) : .invalidHeaderValue(name: "x-cipher-uid", value: uid)
            #expect(throws: expected) { try signer.sign(method: "GET", path: "/followers", body: [UInt8]()) }
        }
        let badNonce = RequestSigner(identity: fixture.identity, nonceSource: { "a\nb" })
        #expect(throws: SigningError.invalidHeaderValue(name: "x-cipher-nonce", value: "a\nb")) {
            try badNonce.sign(method: "GET", path: "/followers", body: [UInt8]())
        }
    }
}

/// A signing key the signer reaches only through `MLDSA65SigningKey`, as an app's Secure Enclave
/// key: it signs with a key it keeps to itself, or fails as told.
struct KeptSigningKey: MLDSA65SigningKey {
    struct Refused: Error {}
    private let key: MLDSA65.PrivateKey
    let fails: Bool
    init(seed: UInt8, fails: Bool = false) throws {
        key = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: seed, count: 32))
        self.fails = fails
    }
    var publicKey: MLDSA65.PublicKey { key.publicKey }
    func signature(for message: some DataProtocol) throws -> Data {
        if fails { throw Refused() }
        return try key.signature(for: message)
    }
}

@Suite("Signing with any MLDSA65SigningKey")
struct SigningKeyProtocolTests {
    @Test("A kept key signs requests that verify under the device's public key, as the pure-Swift key's do")
    func keptKeySigns() throws {
        let fixture = try Fixture()  // the device's key is seed 1's
        let identity = SigningIdentity(uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID, signingKey: try KeptSigningKey(seed: 1))
        #expect(identity.publicKey.rawRepresentation == fixture.identity.publicKey.rawRepresentation)
        let signer = RequestSigner(identity: identity, clock: { SignedRequestValues.now }, nonceSource: { "00112233445566778899aabbccddeeff" })
        let body = Array(#"{"uid":"U"}"#.utf8)
        let headers = try signer.sign(method: "POST", path: "/post", body: body)
        #expect(headers.device == SignedRequestValues.deviceUID)
        #expect(fixture.signatureVerifies(headers.fields, method: "POST", path: "/post"))
        #expect(!fixture.signatureVerifies(headers.fields, method: "POST", path: "/post/delete"))
        // The concrete key's convenience initializer gives the same identity.
        #expect(fixture.identity.signingKey.publicKey.rawRepresentation == identity.publicKey.rawRepresentation)
    }

    @Test("A key that cannot sign gives signingKeyFailed with its reason")
    func failingKey() throws {
        let identity = SigningIdentity(uid: "U", deviceUID: "D", signingKey: try KeptSigningKey(seed: 2, fails: true))
        let error = #expect(throws: SigningError.self) { try RequestSigner(identity: identity).sign(method: "GET", path: "/", body: Data()) }
        #expect(error?.kind == .signingKeyFailed && error?.reason?.contains("Refused") == true)
        #expect(error?.description.hasPrefix("the signing key could not sign: ") == true)
    }
}
