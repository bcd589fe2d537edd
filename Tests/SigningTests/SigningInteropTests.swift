import Foundation
import PQCrypto
import ClassicalCrypto
import SHA2
import TestSupport
import Testing

@testable import Signing
@testable import StationEmulator

@Suite("Signing interop with the station's checks in Python (dilithium-py)")
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

    /// Requests signed by dilithium-py (another client) pass the Swift verifier; a wrong key or
    /// altered field fails it.
    @Test func pythonSignedRequestsPassTheVerifier() async throws {
        let fixture = try Fixture()
        let body = Array("{\"post_cid\":\"Qm\"}".utf8)
        let hash = SHA256.hash(data: body).hex
        var request = SigningInteropRequest()
        var canonicals = [CanonicalRequest]()
        for index in 0..<10 {
            let canonical = CanonicalRequest(
                method: "POST", path: "/post/delete", uid: Fixture.stationUID, deviceUID: Fixture.deviceUID,
                timestamp: String(Fixture.now - Int64(index)), nonce: "python-\(index)", bodySHA256: hash)
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
            await #expect(throws: VerificationFailure.badAuth) {
                try await fixture.verify(path: "/post/delete", headers: headers.map {
                    $0.name == "x-cipher-nonce" ? ($0.name, $0.value + "x") : $0
                }, body: body)
            }
            #expect(try await fixture.verify(path: "/post/delete", headers: headers, body: body).uid == Fixture.stationUID)
        }
    }

    /// The path rules and Python's `int()`, `b64decode(validate=True)` and `bytes.fromhex`
    /// agree with Python on crafted and random inputs.
    @Test func parsingMatchesPython() throws {
        var rng = SplitMix64(seed: 0xC0_4BA7)
        var request = SigningInteropRequest()
        request.paths = Self.paths + ["/%", "/%%41", "/a%2", "/%E2%82%AC", "/%C3", "/a%0Ab", "/a%0db#", "/%3F%3F", "/%7e"]
        let pathAlphabet = Array("/ab%09AFfz?#.".utf8)
        for _ in 0..<100 {
            let length = Int(rng.next() % 12) + 1
            request.paths.append("/" + String(decoding: (0..<length).map { _ in pathAlphabet[Int(rng.next() % UInt64(pathAlphabet.count))] }, as: UTF8.self))
        }
        request.ints = [
            "0", "-0", "+0", " 12 ", "\t12\n", "\u{0B}7\u{0C}", "\u{1C}5\u{1F}", "\u{85}9\u{A0}", "1_000", "1__000", "_1", "1_", "+",
            "-", "", " ", "12.5", "1e3", "0x1f", "٣", "１２", "9223372036854775807", "9223372036854775808",
            "-9223372036854775808", "-9223372036854775809", "0012", "+-1", "1 2", String(repeating: "7", count: 4300),
            String(repeating: "7", count: 4301), String(repeating: "1_", count: 4300) + "1", "\u{2003}5\u{3000}",
            "\u{1680}6", "5\u{200B}", "1\u{0}",
        ]
        request.base64 = [
            "", "A", "AA", "AAA", "AAAA", "AA=", "AA==", "AAA=", "AAA==", "AAAA=", "AAAA==", "AAAA===", "A=", "A==",
            "AB==", "AB=", "ABC=", "AB/+", "ab-_", "AA AA", "AA\nAA", "=AAA", "AA=A", "é", "AAAAA", "AAAAAA", "AAAAAAA",
            "AQ==", "AR==", "AAE=", "AAF=", "QUJD", "AAAA====", "AB=====", "A=A=", "AAAA=A", "AAAA=AAAA", "=", "==",
        ]
        request.fromhex = [
            "", "00", "0", "000", "0a0B", "0a 0b", " 0a", "0a ", "0 a", "0a\t0b", "0a\n0b\r", "0a\u{0B}0b", "0a\u{0C}0b",
            "0a\u{1C}0b", "é0", "0g", "g0", "0a  0b", "  ", "\u{A0}00",
        ]
        let response = try InteropPython.call("signing_interop.py", request, as: SigningInteropResponse.self)
        #expect(response.paths == request.paths.map { CanonicalRequest.stationPath(requestTarget: $0) })
        for (text, python) in zip(request.ints, response.ints) {
            let swift: String? = switch PythonCompatibility.parseInteger(text) {
            case let .value(value): String(value)
            case .outOfRange: "out of range"
            case .invalid: nil
            }
            if swift == "out of range" {
                #expect(python != nil, "\(text.prefix(40))")
            } else {
                #expect(swift == python, "\(text.prefix(40))")
            }
        }
        #expect(request.base64.map { PythonCompatibility.decodeBase64Strict($0)?.hex } == response.base64)
        #expect(request.fromhex.map { PythonCompatibility.bytesFromHex($0)?.hex } == response.fromhex)
    }
}
