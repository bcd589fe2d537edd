import Foundation
import PQCrypto
import ClassicalCrypto
import SHA2
import TestSupport
import Testing

@testable import Signing

@Suite("Signing interop with the station's checks in Python (dilithium-py)",
       .enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
struct SigningInteropTests {
    static let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "post", "Get"]
    static let paths = [
        "/post", "/post/delete", "/post/share", "/rewrap", "/follow", "/unfollow", "/inbox", "/followers",
        "/followers/approve", "/profile/update", "/content/QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4",
        "/content/QmY2b5?download=1", "/search?q=a%20b&x=%2F", "/files/My%20Photo%20%C3%A9.jpg", "/a%3Fb?c", "/a%23b",
        "/odd%zz/%4", "/tab%09here", "/%FF%FE", "/", "/x/",
    ]

    /// 200 requests signed in Swift (random methods, paths and bodies up to 1 MiB) verify in
    /// Python, which rebuilds the canonical string from the headers and the body exactly as the
    /// station does.
    @Test func twoHundredSignedRequestsVerifyInPython() throws {
        var rng = SplitMix64(seed: 0x516E_ED00)
        var keys = [MLDSA65.PrivateKey]()
        for _ in 0..<10 { keys.append(try MLDSA65.PrivateKey(seedRepresentation: rng.bytes(32))) }
        var request = SigningInteropRequest()
        var expectedPaths = [String]()
        for index in 0..<200 {
            let key = keys[index % keys.count]
            let identity = SigningIdentity(uid: "station-\(index % 3)", deviceUID: "Device-\(index % keys.count)-AB12CD34", privateKey: key)
            let timestamp = 1_700_000_000 + Int64(rng.next() % 100_000_000)
            let signer = RequestSigner(identity: identity, clock: { timestamp })
            let method = Self.methods[Int(rng.next() % UInt64(Self.methods.count))]
            let target = Self.paths[Int(rng.next() % UInt64(Self.paths.count))]
            // Bodies up to 1 MiB, log-uniform so that every size class appears; two of exactly 1 MiB.
            let length = index < 2 ? 1 << 20 : (index % 10 == 0 ? 0 : Int(pow(2.0, Double(rng.next() % 2001) / 100.0)))
            let bodyKey = rng.bytes(32)
            let body = try keystreamBody(key: bodyKey, length: length)
            let headers: SignedRequestHeaders
            if index % 2 == 0 {
                headers = try signer.sign(method: method, path: target, body: body)
            } else {
                headers = try signer.sign(method: method, path: target, bodySHA256: SHA256.hash(data: body))
            }
            request.verify.append(.init(
                method: method, target: target, headers: headers.dictionary,
                body: .init(key: bodyKey.hex, length: length), pk: key.publicKey.rawRepresentation.hex))
            expectedPaths.append(CanonicalRequest.stationPath(requestTarget: target))
        }
        let response = try InteropPython.call("signing_interop.py", request, as: SigningInteropResponse.self)
        try #require(response.verified.count == 200)
        for (index, result) in response.verified.enumerated() {
            #expect(result.ok, "request \(index): \(result.canonical)")
            #expect(result.body_hash_ok, "request \(index)")
            #expect(result.path == expectedPaths[index], "request \(index)")
        }
    }

    /// Requests signed by dilithium-py (another client) carry signatures that verify here over the
    /// canonical string the headers describe; an altered field does not verify.
    @Test func pythonSignedRequestsVerify() throws {
        let fixture = try Fixture()
        let hash = SHA256.hash(data: Array("{\"post_cid\":\"Qm\"}".utf8)).hex
        var request = SigningInteropRequest()
        var canonicals = [CanonicalRequest]()
        for index in 0..<10 {
            let canonical = CanonicalRequest(
                method: "POST", path: "/post/delete", uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID,
                timestamp: String(SignedRequestValues.now - Int64(index)), nonce: "python-\(index)", bodySHA256: hash)
            canonicals.append(canonical)
            request.sign.append(.init(sk: fixture.privateKey.expandedRepresentation.hex, canonical: canonical.string))
        }
        let response = try InteropPython.call("signing_interop.py", request, as: SigningInteropResponse.self)
        try #require(response.signatures.count == 10)
        for (canonical, signature) in zip(canonicals, response.signatures) {
            let headers: [(name: String, value: String)] = [
                ("x-cipher-uid", canonical.uid), ("x-cipher-device", canonical.deviceUID), ("x-cipher-ts", canonical.timestamp),
                ("x-cipher-nonce", canonical.nonce), ("x-cipher-body-sha256", canonical.bodySHA256), ("x-cipher-sig", signature),
            ]
            #expect(fixture.signatureVerifies(headers, method: "POST", path: "/post/delete"))
            let altered = headers.map { $0.name == "x-cipher-nonce" ? ($0.name, $0.value + "x") : $0 }
            #expect(!fixture.signatureVerifies(altered, method: "POST", path: "/post/delete"))
        }
    }

    /// The canonical path of a request target agrees with the station's Python on crafted and
    /// random targets.
    @Test func stationPathMatchesPython() throws {
        var rng = SplitMix64(seed: 0xC0_4BA7)
        var request = SigningInteropRequest()
        request.paths = Self.paths + ["/%", "/%%41", "/a%2", "/%E2%82%AC", "/%C3", "/a%0Ab", "/a%0db#", "/%3F%3F", "/%7e"]
        let pathAlphabet = Array("/ab%09AFfz?#.".utf8)
        for _ in 0..<100 {
            let length = Int(rng.next() % 12) + 1
            request.paths.append("/" + String(decoding: (0..<length).map { _ in pathAlphabet[Int(rng.next() % UInt64(pathAlphabet.count))] }, as: UTF8.self))
        }
        let response = try InteropPython.call("signing_interop.py", request, as: SigningInteropResponse.self)
        #expect(response.paths == request.paths.map { CanonicalRequest.stationPath(requestTarget: $0) })
    }
}
