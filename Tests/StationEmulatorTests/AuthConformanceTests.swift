import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import SHA2
import StationEmulator
import Testing

/// WIRE_NOTES §1: the check order and each failure's status and exact body, over loopback HTTP.
@Suite("Conformance: transport and auth (WIRE_NOTES §1)")
struct AuthConformanceTests {
    /// The headers a signed GET carries, with one changed.
    static func headers(_ device: TestDevice, path: String, ts: Int64, nonce: String = RequestSigner.randomNonce(),
                        bodyHash: String = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                        method: String = "GET", signature: String? = nil) -> [(String, String)] {
        // Signed exactly as sent (an upper-case hash stays upper case here, unlike the station's string).
        let canonical = [method, path, device.uid, device.deviceUID, String(ts), nonce, bodyHash].joined(separator: "\n")
        let sig = signature ?? ((try? device.mldsa.signature(for: Array(canonical.utf8), context: Data()))?.base64EncodedString() ?? "")
        return [("x-cipher-uid", device.uid), ("x-cipher-device", device.deviceUID), ("x-cipher-ts", String(ts)),
                ("x-cipher-nonce", nonce), ("x-cipher-body-sha256", bodyHash), ("x-cipher-sig", sig)]
    }

    @Test func missingHeadersAre422ListingEachHeader() throws {
        let harness = try Harness()
        let response = try harness.send("GET", "/followers")
        #expect(response.status == 422)
        let expected = #"{"detail":["#
            + ["x-cipher-uid", "x-cipher-device", "x-cipher-ts", "x-cipher-nonce", "x-cipher-body-sha256", "x-cipher-sig"].map {
                #"{"type":"missing","loc":["header","\#($0)"],"msg":"Field required","input":null}"#
            }.joined(separator: ",") + "]}"
        #expect(response.text == expected)
        // One header missing names only that one.
        let device = try harness.pair()
        let partial = Self.headers(device, path: "/followers", ts: harness.now).filter { $0.0 != "x-cipher-nonce" }
        let one = try harness.send("GET", "/followers", headers: partial)
        #expect(one.status == 422)
        #expect(one.text == #"{"detail":[{"type":"missing","loc":["header","x-cipher-nonce"],"msg":"Field required","input":null}]}"#)
    }

    @Test func eachFailureInCheckOrder() throws {
        let clock = ManualClock()
        let harness = try Harness(clock: clock)
        let device = try harness.pair()
        let now = harness.now
        func get(_ headers: [(String, String)]) throws -> RawResponse { try harness.send("GET", "/followers", headers: headers) }

        var bad = Self.headers(device, path: "/followers", ts: now)
        bad[2].1 = "12.5"
        var response = try get(bad)
        #expect(response.status == 401 && response.text == #"{"detail":"bad timestamp"}"#)

        for skew: Int64 in [-61, 61] {
            response = try get(Self.headers(device, path: "/followers", ts: now + skew))
            #expect(response.status == 401 && response.text == #"{"detail":"stale request"}"#)
        }
        // 60 s either way is still inside the window.
        response = try get(Self.headers(device, path: "/followers", ts: now - 60))
        #expect(response.status == 200)

        let stranger = TestDevice(uid: harness.uid, deviceUID: "never-paired")
        response = try get(Self.headers(stranger, path: "/followers", ts: now))
        #expect(response.status == 403 && response.text == #"{"detail":"device not authorized"}"#)
        // The device uid is compared exactly: another case is another device.
        let upper = TestDevice(uid: device.uid, deviceUID: device.deviceUID.uppercased(), mlkem: device.mlkem, mldsa: device.mldsa)
        response = try get(Self.headers(upper, path: "/followers", ts: now))
        #expect(response.status == 403 && response.text == #"{"detail":"device not authorized"}"#)

        let nonce = RequestSigner.randomNonce()
        response = try get(Self.headers(device, path: "/followers", ts: now, nonce: nonce))
        #expect(response.status == 200)
        response = try get(Self.headers(device, path: "/followers", ts: now, nonce: nonce))
        #expect(response.status == 401 && response.text == #"{"detail":"replay"}"#)

        response = try get(Self.headers(device, path: "/followers", ts: now, signature: "not base64!"))
        #expect(response.status == 401 && response.text == #"{"detail":"bad signature encoding"}"#)

        // Signed over another path, or by another key: bad auth. The nonce of a failed request
        // is not recorded, so the same nonce then works.
        let retried = RequestSigner.randomNonce()
        let wrongPath = Self.headers(device, path: "/following", ts: now, nonce: retried)
        response = try get(wrongPath)
        #expect(response.status == 401 && response.text == #"{"detail":"bad auth"}"#)
        response = try get(Self.headers(device, path: "/followers", ts: now, nonce: retried))
        #expect(response.status == 200)
        let impostor = TestDevice(uid: device.uid, deviceUID: device.deviceUID)
        response = try get(Self.headers(impostor, path: "/followers", ts: now))
        #expect(response.status == 401 && response.text == #"{"detail":"bad auth"}"#)

        // The station's clock decides: moving it makes a fresh signature stale.
        clock.advance(by: 120)
        response = try get(Self.headers(device, path: "/followers", ts: now))
        #expect(response.status == 401 && response.text == #"{"detail":"stale request"}"#)
    }

    @Test func bodyHashIsOverTheRawBodyAndUppercaseFailsAsBadAuth() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let body = Array(#"{"uid":"nobody"}"#.utf8)
        let digest = Hex.encode(SHA256.hash(data: body))
        let wrong = Self.headers(device, path: "/unfollow", ts: harness.now, bodyHash: Hex.encode(SHA256.hash(data: [UInt8](body.dropLast()))),
                                 method: "POST")
        var response = try harness.send("POST", "/unfollow", headers: wrong + [("Content-Type", "application/json")], body: body)
        #expect(response.status == 401 && response.text == #"{"detail":"bad body hash"}"#)
        // An upper-case hash passes the hash check, then fails the signature (the server signs the lower-case form).
        let upper = Self.headers(device, path: "/unfollow", ts: harness.now, bodyHash: digest.uppercased(), method: "POST")
        response = try harness.send("POST", "/unfollow", headers: upper + [("Content-Type", "application/json")], body: body)
        #expect(response.status == 401 && response.text == #"{"detail":"bad auth"}"#)
        let good = Self.headers(device, path: "/unfollow", ts: harness.now, bodyHash: digest, method: "POST")
        response = try harness.send("POST", "/unfollow", headers: good + [("Content-Type", "application/json")], body: body)
        #expect(response.status == 200)
    }

    @Test func pathIsDecodedWithoutQueryAndGETHashIsNotCompared() throws {
        let harness = try Harness()
        let device = try harness.pair()
        var response = try harness.signed(device, "GET", "/followers?page=2", signedPath: "/followers")
        #expect(response.status == 200)
        response = try harness.signed(device, "GET", "/f%6Fllowers", signedPath: "/followers")
        #expect(response.status == 200)
        // On a GET path the header value is signed but never compared with the (empty) body.
        let odd = String(repeating: "ab", count: 32)
        response = try harness.send("GET", "/followers", headers: Self.headers(device, path: "/followers", ts: harness.now, bodyHash: odd))
        #expect(response.status == 200)
    }

    @Test func followerDevicesAreRefusedOnOwnerEndpoints() throws {
        let harness = try Harness()
        let owner = try harness.pair()
        // A follower that sent an ML-DSA key and was approved authenticates, but is not the owner.
        let follower = TestDevice(uid: "follower-uid", deviceUID: "follower-uid")
        var response = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": .string(follower.uid),
                                                           "mlkem_public_key": .string(follower.mlkemHex),
                                                           "mldsa_public_key": .string(follower.mldsaHex)])
        #expect(response.status == 200)
        response = try harness.signed(follower, "GET", "/followers")
        #expect(response.status == 403 && response.text == #"{"detail":"device not authorized"}"#)
        response = try harness.signedJSON(owner, "/followers/approve", ["uid": .string(follower.uid)])
        #expect(response.status == 200)
        response = try harness.signed(follower, "GET", "/followers")
        #expect(response.status == 403 && response.text == #"{"detail":"owner-only endpoint"}"#)

        // A follower without an ML-DSA key is Allowed but cannot authenticate at all.
        let keyless = TestDevice(uid: "keyless-uid", deviceUID: "keyless-uid")
        response = try harness.json("POST", "/inbox", ["type": "follow_request", "uid": .string(keyless.uid),
                                                       "mlkem_public_key": .string(keyless.mlkemHex)])
        #expect(response.status == 200)
        response = try harness.signedJSON(owner, "/followers/approve", ["uid": .string(keyless.uid)])
        #expect(response.status == 200)
        response = try harness.signed(keyless, "GET", "/followers")
        #expect(response.status == 403 && response.text == #"{"detail":"device has no auth (ML-DSA) public key"}"#)
    }

    @Test func rewrapBodyMustMatchTheHeaders() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let response = try harness.signedJSON(device, "/rewrap", ["uid": .string(harness.uid), "device_uid": "someone-else",
                                                                  "post_cid": "QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4"])
        #expect(response.status == 401 && response.text == #"{"detail":"header/body mismatch"}"#)
    }

    @Test func declaredBodiesOverTheLimitGet413BeforeAuth() throws {
        let harness = try Harness()
        let response = try harness.send("POST", "/post", headers: [("Content-Length", "104857601")])
        #expect(response.status == 413)
        #expect(response.text == #"{"error":"Request too large (max 104857600 bytes)"}"#)
    }

    @Test func everyResponseCarriesADateHeader() throws {
        let harness = try Harness()
        for (method, path) in [("GET", "/health"), ("GET", "/profile"), ("GET", "/nowhere"), ("GET", "/followers"), ("DELETE", "/post")] {
            let response = try harness.send(method, path)
            let date = try #require(response.header("date"), "\(method) \(path)")
            // IMF-fixdate, e.g. "Sun, 29 Nov 2026 14:30:00 GMT".
            #expect(date.count == 29 && date.hasSuffix(" GMT"), "\(date)")
        }
        #expect(try harness.send("GET", "/nowhere").text == #"{"detail":"Not Found"}"#)
        let wrongMethod = try harness.send("DELETE", "/post")
        #expect(wrongMethod.status == 405 && wrongMethod.text == #"{"detail":"Method Not Allowed"}"#)
    }
}
