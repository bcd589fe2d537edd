import Foundation
import PQCrypto
import ClassicalCrypto
import SHA2
import TestSupport
import Testing

@testable import Signing
@testable import StationEmulator

@Suite("RequestVerifier: the station's checks, in order, with its failures")
struct RequestVerifierTests {
    let body = Array(#"{"uid":"U","device_uid":"D","post_cid":"Qm"}"#.utf8)

    @Test func acceptsASignedRequestOnceThenReplay() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/rewrap", body: body)
        let device = try await fixture.verify(path: "/rewrap", headers: headers.fields, body: body)
        #expect(device == AuthenticatedDevice(uid: SignedRequestValues.stationUID, deviceUID: SignedRequestValues.deviceUID))
        #expect(await fixture.nonces.count == 1)
        await #expect(throws: VerificationFailure.replay) {
            try await fixture.verify(path: "/rewrap", headers: headers.fields, body: body)
        }
        // Header names match case-insensitively; the first of repeated headers counts.
        let other = try VerifierFixture(nonce: "feedfeedfeedfeedfeedfeedfeedfeed")
        let signed = try other.signer.sign(method: "GET", path: "/followers", body: [UInt8]())
        let shouting: [(name: String, value: String)] = signed.fields.map { ($0.name.uppercased(), $0.value) } + [("x-cipher-nonce", "second")]
        #expect(try await other.verify(method: "GET", path: "/followers", headers: shouting, body: []).uid == SignedRequestValues.stationUID)
    }

    @Test func missingHeadersAre422InDeclarationOrder() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        await #expect(throws: VerificationFailure.missingHeaders(["x-cipher-ts"])) {
            try await fixture.verify(headers: headers.removing("x-cipher-ts"), body: body)
        }
        await #expect(throws: VerificationFailure.missingHeaders(SignedRequestHeaders.names)) {
            try await fixture.verify(headers: [], body: body)
        }
        await #expect(throws: VerificationFailure.missingHeaders(["x-cipher-uid", "x-cipher-sig"])) {
            try await fixture.verify(headers: headers.removing("x-cipher-sig", "x-cipher-uid"), body: body)
        }
        #expect(VerificationFailure.missingHeaders(["x-cipher-uid", "x-cipher-sig"]).responseBody
            == #"{"detail":[{"type":"missing","loc":["header","x-cipher-uid"],"msg":"Field required","input":null},{"type":"missing","loc":["header","x-cipher-sig"],"msg":"Field required","input":null}]}"#)
    }

    /// `int()` rules: whitespace, sign and underscores are accepted (and the raw text is what is
    /// signed); decimals, empty text and stray underscores are `bad timestamp`.
    @Test func timestampParsing() async throws {
        let fixture = try VerifierFixture()
        let hash = SHA256.hash(data: body).hex
        for (index, text) in [" 1795956595 ", "+1795956595", "1_795_956_595", "\t1795956600\n", "01795956595"].enumerated() {
            let nonce = "nonce-\(index)"
            let signature = try fixture.signature(method: "POST", path: "/post", timestamp: text, nonce: nonce, bodySHA256: hash)
            let headers: [(name: String, value: String)] = [("x-cipher-uid", SignedRequestValues.stationUID), ("x-cipher-device", SignedRequestValues.deviceUID), ("x-cipher-ts", text),
                           ("x-cipher-nonce", nonce), ("x-cipher-body-sha256", hash), ("x-cipher-sig", signature)]
            #expect(try await fixture.verify(headers: headers, body: body).deviceUID == SignedRequestValues.deviceUID, "\(text)")
        }
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        for text in ["12.5", "", " ", "abc", "1_", "_1", "1__0", "0x10", "1e9", String(repeating: "1", count: 4301)] {
            await #expect(throws: VerificationFailure.badTimestamp, "\(text)") {
                try await fixture.verify(headers: headers.replacing("x-cipher-ts", with: text), body: body)
            }
        }
    }

    @Test func staleRequests() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        for now in [SignedRequestValues.now + 61, SignedRequestValues.now - 61, SignedRequestValues.now + 100_000] {
            await #expect(throws: VerificationFailure.staleRequest) {
                try await fixture.verify(headers: headers.fields, body: body, now: now)
            }
        }
        for text in ["99999999999999999999999", "-9223372036854775808", String(repeating: "9", count: 4300)] {
            await #expect(throws: VerificationFailure.staleRequest, "\(text.prefix(30))") {
                try await fixture.verify(headers: headers.replacing("x-cipher-ts", with: text), body: body)
            }
        }
        // Exactly 60 s either way is still fresh (and the failed attempts above recorded no nonce).
        #expect(try await fixture.verify(headers: headers.fields, body: body, now: SignedRequestValues.now + 60).uid == SignedRequestValues.stationUID)
        let later = try VerifierFixture(nonce: "later")
        let other = try later.signer.sign(method: "POST", path: "/post", body: body)
        #expect(try await later.verify(headers: other.fields, body: body, now: SignedRequestValues.now - 60).uid == SignedRequestValues.stationUID)
    }

    @Test func deviceChecks() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        for device in ["unknown", SignedRequestValues.deviceUID.lowercased(), ""] {
            await #expect(throws: VerificationFailure.deviceNotAuthorized) {
                try await fixture.verify(headers: headers.replacing("x-cipher-device", with: device), body: body)
            }
        }
        await #expect(throws: VerificationFailure.deviceNotAuthorized) {
            try await fixture.verify(headers: headers.replacing("x-cipher-uid", with: "someone-else"), body: body)
        }
        for stored in [String?.none, ""] {
            let keyless = try VerifierFixture(storedKey: .some(stored))
            await #expect(throws: VerificationFailure.deviceHasNoAuthKey) {
                try await keyless.verify(headers: headers.fields, body: body)
            }
        }
    }

    /// The station checks in a fixed order; a request with several faults gets the first one.
    @Test func checkOrder() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        let faults: [(String, String)] = [
            ("x-cipher-ts", "1795956000"), ("x-cipher-device", "unknown"), ("x-cipher-body-sha256", String(repeating: "0", count: 64)),
            ("x-cipher-sig", "not base64!"),
        ]
        var fields = headers.fields
        for (name, value) in faults { fields = fields.map { $0.name == name ? ($0.name, value) : $0 } }
        await #expect(throws: VerificationFailure.staleRequest) { try await fixture.verify(headers: fields, body: body) }
        fields = fields.map { $0.name == "x-cipher-ts" ? ($0.name, headers.timestamp) : $0 }
        await #expect(throws: VerificationFailure.deviceNotAuthorized) { try await fixture.verify(headers: fields, body: body) }
        fields = fields.map { $0.name == "x-cipher-device" ? ($0.name, headers.device) : $0 }
        await #expect(throws: VerificationFailure.badBodyHash) { try await fixture.verify(headers: fields, body: body) }
        fields = fields.map { $0.name == "x-cipher-body-sha256" ? ($0.name, headers.bodySHA256) : $0 }
        await #expect(throws: VerificationFailure.badSignatureEncoding) { try await fixture.verify(headers: fields, body: body) }

        // Replay comes before the body hash and the signature.
        _ = try await fixture.verify(headers: headers.fields, body: body)
        await #expect(throws: VerificationFailure.replay) {
            try await fixture.verify(headers: headers.replacing("x-cipher-sig", with: "!"), body: Array("other".utf8))
        }
        // The stored key is decoded after the body hash and before the signature encoding.
        let badKey = try VerifierFixture(storedKey: .some("zz"))
        await #expect(throws: VerificationFailure.badBodyHash) {
            try await badKey.verify(headers: headers.replacing("x-cipher-body-sha256", with: "00"), body: body)
        }
        await #expect(throws: VerificationFailure.badDeviceAuthPublicKey) {
            try await badKey.verify(headers: headers.replacing("x-cipher-sig", with: "!"), body: body)
        }
    }

    @Test func bodyHashRules() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        await #expect(throws: VerificationFailure.badBodyHash) {
            try await fixture.verify(headers: headers.fields, body: body + [0])
        }
        // Signed lowercase, sent uppercase: the station lowercases both, so it passes.
        #expect(try await fixture.verify(headers: headers.replacing("x-cipher-body-sha256", with: headers.bodySHA256.uppercased()), body: body)
            .uid == SignedRequestValues.stationUID)
        // Signed uppercase: passes the hash check, fails the signature.
        let upper = SHA256.hash(data: body).hex.uppercased()
        let canonical = "POST\n/post\n\(SignedRequestValues.stationUID)\n\(SignedRequestValues.deviceUID)\n\(headers.timestamp)\nu\n\(upper)"
        let upperSignature = try fixture.privateKey.signature(for: Array(canonical.utf8)).base64EncodedString()
        let upperFields: [(name: String, value: String)] = [("x-cipher-uid", SignedRequestValues.stationUID), ("x-cipher-device", SignedRequestValues.deviceUID), ("x-cipher-ts", headers.timestamp),
                           ("x-cipher-nonce", "u"), ("x-cipher-body-sha256", upper), ("x-cipher-sig", upperSignature)]
        await #expect(throws: VerificationFailure.badAuth) { try await fixture.verify(headers: upperFields, body: body) }
        // A non-ASCII body hash crashes the station's comparison on hashed paths (500) ...
        let fresh = try VerifierFixture()
        await #expect(throws: VerificationFailure.internalServerError) {
            try await fresh.verify(headers: headers.replacing("x-cipher-body-sha256", with: "é"), body: body)
        }
        // ... while on GET paths the header is only signed, never compared.
        let getter = try VerifierFixture(nonce: "g")
        let get = try getter.signer.sign(method: "GET", path: "/followers", body: [UInt8]())
        #expect(try await getter.verify(method: "GET", path: "/followers", headers: get.fields, body: Array("ignored".utf8)).uid
            == SignedRequestValues.stationUID)
        await #expect(throws: VerificationFailure.badAuth) {
            try await fresh.verify(method: "GET", path: "/followers", headers: get.replacing("x-cipher-body-sha256", with: "é"), body: [])
        }
    }

    @Test func storedKeyChecks() async throws {
        let base = try VerifierFixture()
        let keyHex = base.privateKey.publicKey.rawRepresentation.hex
        let headers = try base.signer.sign(method: "POST", path: "/post", body: body)
        for stored in ["zz", "abc", keyHex + "0", "é" + keyHex] {
            let fixture = try VerifierFixture(storedKey: .some(stored))
            await #expect(throws: VerificationFailure.badDeviceAuthPublicKey) { try await fixture.verify(headers: headers.fields, body: body) }
        }
        for stored in [String(keyHex.dropLast(2)), keyHex + "00", "00"] {
            let fixture = try VerifierFixture(storedKey: .some(stored))
            await #expect(throws: VerificationFailure.badDeviceAuthPublicKeyLength) {
                try await fixture.verify(headers: headers.fields, body: body)
            }
        }
        // bytes.fromhex accepts whitespace between byte pairs and uppercase.
        var spaced = ""
        for (index, character) in keyHex.uppercased().enumerated() {
            if index % 2 == 0, index > 0 { spaced += index % 64 == 0 ? "\n" : " " }
            spaced.append(character)
        }
        let fixture = try VerifierFixture(storedKey: .some(spaced))
        #expect(try await fixture.verify(headers: headers.fields, body: body).uid == SignedRequestValues.stationUID)
    }

    @Test func signatureEncodingAndValidity() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        for text in ["not base64!", "A", "AA", "AAA", "AA=", "AAAAA", "A===", "é", "=AAA", "AA=A", "AAA==", "-_-_"] {
            await #expect(throws: VerificationFailure.badSignatureEncoding, "\(text)") {
                try await fixture.verify(headers: headers.replacing("x-cipher-sig", with: text), body: body)
            }
        }
        for text in ["", "AAAA", "AAAA=", "AAAA===", "AA==", "AAA="] {
            await #expect(throws: VerificationFailure.badAuth, "\(text)") {
                try await fixture.verify(headers: headers.replacing("x-cipher-sig", with: text), body: body)
            }
        }
        // Wrong key, method, path or signed fields all fail the signature.
        let stranger = try VerifierFixture(seed: 2)
        let strangers = try stranger.signer.sign(method: "POST", path: "/post", body: body)
        await #expect(throws: VerificationFailure.badAuth) { try await fixture.verify(headers: strangers.fields, body: body) }
        await #expect(throws: VerificationFailure.badAuth) { try await fixture.verify(method: "PUT", headers: headers.fields, body: body) }
        await #expect(throws: VerificationFailure.badAuth) {
            try await fixture.verify(path: "/post/delete", headers: headers.fields, body: body)
        }
        await #expect(throws: VerificationFailure.badAuth) {
            try await fixture.verify(headers: headers.replacing("x-cipher-nonce", with: "other"), body: body)
        }
        var flipped = try #require(Data(base64Encoded: headers.signature))
        flipped[100] ^= 1
        await #expect(throws: VerificationFailure.badAuth) {
            try await fixture.verify(headers: headers.replacing("x-cipher-sig", with: flipped.base64EncodedString()), body: body)
        }
        // None of the failures recorded the nonce: the genuine request still passes. Lowercase
        // method on the wire is uppercased by the station too.
        #expect(await fixture.nonces.count == 0)
        #expect(try await fixture.verify(method: "post", headers: headers.fields, body: body).uid == SignedRequestValues.stationUID)
    }

    @Test func ownerOnly() throws {
        let owner = AuthenticatedDevice(uid: SignedRequestValues.stationUID, deviceUID: "d")
        try RequestVerifier.requireOwner(owner, stationUID: SignedRequestValues.stationUID)
        #expect(throws: VerificationFailure.ownerOnlyEndpoint) {
            try RequestVerifier.requireOwner(AuthenticatedDevice(uid: "follower", deviceUID: "follower"), stationUID: SignedRequestValues.stationUID)
        }
        #expect(throws: VerificationFailure.ownerOnlyEndpoint) { try RequestVerifier.requireOwner(owner, stationUID: "") }
    }

    @Test func statusesAndBodies() {
        let table: [(VerificationFailure, Int, String)] = [
            (.badTimestamp, 401, "bad timestamp"), (.staleRequest, 401, "stale request"),
            (.deviceNotAuthorized, 403, "device not authorized"),
            (.deviceHasNoAuthKey, 403, "device has no auth (ML-DSA) public key"), (.replay, 401, "replay"),
            (.badBodyHash, 401, "bad body hash"), (.badDeviceAuthPublicKey, 401, "bad device auth public key"),
            (.badDeviceAuthPublicKeyLength, 401, "bad device auth public key length"),
            (.badSignatureEncoding, 401, "bad signature encoding"), (.badAuth, 401, "bad auth"),
            (.ownerOnlyEndpoint, 403, "owner-only endpoint"),
        ]
        for (failure, status, detail) in table {
            #expect(failure.status == status)
            #expect(failure.responseBody == "{\"detail\":\"\(detail)\"}")
            #expect(failure.contentType == "application/json")
        }
        #expect(VerificationFailure.missingHeaders(["x-cipher-ts"]).status == 422)
        #expect(VerificationFailure.internalServerError.status == 500)
        #expect(VerificationFailure.internalServerError.responseBody == "Internal Server Error")
    }

    /// Two requests racing with one nonce: exactly one passes.
    @Test func concurrentReplay() async throws {
        let fixture = try VerifierFixture()
        let headers = try fixture.signer.sign(method: "POST", path: "/post", body: body)
        let body = self.body
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await fixture.verify(headers: headers.fields, body: body)
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
    }

    @Test func nonceStoreForgetsAfterRetention() async {
        let clock = SettableClock(now: 1_000_000)
        let store = InMemoryNonceStore(clock: { clock.now })
        #expect(await store.insert(uid: "u", deviceUID: "d", nonce: "old", timestamp: 1_000_000))
        #expect(await !store.insert(uid: "u", deviceUID: "d", nonce: "old", timestamp: 1_000_000))
        #expect(await store.insert(uid: "u", deviceUID: "other", nonce: "old", timestamp: 1_000_000))
        #expect(await store.contains(uid: "u", deviceUID: "d", nonce: "old"))
        #expect(await !store.contains(uid: "u", deviceUID: "d", nonce: "new"))
        clock.now = 1_000_000 + 24 * 3600 + 1
        #expect(await store.insert(uid: "u", deviceUID: "d", nonce: "new", timestamp: clock.now))
        #expect(await !store.contains(uid: "u", deviceUID: "d", nonce: "old"))
        #expect(await store.count == 1)
    }
}

/// A clock the test moves by hand.
final class SettableClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64

    init(now: Int64) { value = now }

    var now: Int64 {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
