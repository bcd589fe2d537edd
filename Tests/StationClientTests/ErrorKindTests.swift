import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// A transport that cannot pin, as `URLSessionTransport` on Linux: every pinned request fails
/// with `.pinningUnsupported` before anything is sent.
private struct NonPinningTransport: WrappingTransport {
    let base: any HTTPTransport

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        if !options.pinnedPublicKeys.isEmpty {
            throw TransportError(.pinningUnsupported, method: request.method, url: request.url, message: "no pinning here")
        }
        return try await base.send(request, body: body, options: options)
    }
}

@Suite("Error kinds an app decides on")
struct ErrorKindTests {
    static let missingCID = "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX"

    @Test("A 404 is .notFound, with the status and the station's text")
    func notFound() async throws {
        let client = try await StationRig.pairedInProcess().client
        let error = await #expect(throws: StationClientError.self) { try await client.approveFollower(uid: "nobody-00000000") }
        #expect(error?.kind == .notFound)
        #expect(error?.status == 404)
        #expect(error?.stationMessage?.isEmpty == false)
        #expect(error?.operation == "POST /followers/approve")
    }

    @Test("A 429 is .throttled, with Retry-After in seconds when the station sends it")
    func throttled() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let post = try await client.publish(data: Data("t".utf8), metadata: Fixture.drive("t", size: 1))
        await client.clearPostKeyCache()
        let route = RequestRoute("POST", path: "/rewrap")
        rig.emulator.faults.failNextRequests(1, status: 429, body: #"{"detail":"slow down"}"#, headers: ["Retry-After": "30"],
                                             route: route)
        let error = await #expect(throws: StationClientError.self) { try await client.download(postCID: post.postCID) }
        #expect(error?.kind == .throttled)
        #expect(error?.retryAfter == .seconds(30))
        #expect(error?.status == 429)
        #expect(error?.stationMessage == "slow down")
        #expect(error?.description.contains("retry after 30 s") == true)

        rig.emulator.faults.failNextRequests(1, status: 429, route: route)
        let bare = await #expect(throws: StationClientError.self) { try await client.download(postCID: post.postCID) }
        #expect(bare?.kind == .throttled)
        #expect(bare?.retryAfter == nil)
        // Once the station stops throttling, the same call works.
        #expect(try await client.download(postCID: post.postCID) == Data("t".utf8))
    }

    @Test("Retry-After is delay seconds or an HTTP date counted from now; anything else is ignored")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(StationClientError.retryAfter(parsing: "120", now: now) == .seconds(120))
        #expect(StationClientError.retryAfter(parsing: " 0 ", now: now) == .seconds(0))
        #expect(StationClientError.retryAfter(parsing: "Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .seconds(60))
        #expect(StationClientError.retryAfter(parsing: "Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .seconds(0))
        #expect(StationClientError.retryAfter(parsing: "-5", now: now) == nil)
        // A header far in the future, or more digits than Int64 holds, is capped, not a crash.
        let year = Duration.seconds(StationClientError.maximumRetryAfterSeconds)
        #expect(StationClientError.retryAfter(parsing: String(repeating: "9", count: 40), now: now) == year)
        #expect(StationClientError.retryAfter(parsing: "Fri, 31 Dec 9999 23:59:59 GMT", now: now) == year)
        #expect(StationClientError.retryAfter(parsing: "soon", now: now) == nil)
        #expect(StationClientError.retryAfter(parsing: "", now: now) == nil)
    }

    @Test("A 413 from the station is .tooLarge; so is a local refusal, with the limit, before anything is sent")
    func tooLarge() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        rig.emulator.faults.failNextRequests(1, status: 413, body: #"{"detail":"Request body too large"}"#,
                                             route: RequestRoute("POST", path: "/post"))
        let station = await #expect(throws: StationClientError.self) {
            try await client.publish(data: Data("x".utf8), metadata: Fixture.drive("x", size: 1))
        }
        #expect(station?.kind == .tooLarge)
        #expect(station?.status == 413)
        #expect(station?.stationMessage == "Request body too large")

        let metadata = Fixture.drive("big", size: 0)
        let largest = try client.largestPublishableFileSize(metadata: metadata)
        try await Fixture.withTemporaryDirectory { directory in
            let big = directory.appendingPathComponent("big.bin")
            try Fixture.sparseFile(at: big, byteCount: largest + 1)
            let posts = rig.count("POST", "/post")
            let local = await #expect(throws: StationClientError.self) { try await client.publish(fileAt: big, metadata: metadata) }
            #expect(local?.kind == .tooLarge)
            #expect(local?.limit == largest)
            #expect(local?.status == nil)
            #expect(rig.count("POST", "/post") == posts)
        }
    }

    @Test("401 and 403 are .unauthorized, after the single retry a stale clock gets")
    func unauthorized() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let route = RequestRoute("POST", path: "/followers/remove")
        rig.emulator.faults.failNextRequests(1, status: 401, body: #"{"detail":"invalid signature"}"#, route: route)
        let invalid = await #expect(throws: StationClientError.self) { try await client.removeFollower(uid: "someone-0000000") }
        #expect(invalid?.kind == .unauthorized)
        #expect(invalid?.status == 401)
        #expect(invalid?.stationMessage == "invalid signature")

        // "stale request" twice: the client retries once with the station's clock, then gives up.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let before = rig.emulator.requests.count(route)
        rig.emulator.faults.failNextRequests(2, status: 401, body: #"{"detail":"stale request"}"#,
                                             headers: ["Date": formatter.string(from: Date())], route: route)
        let stale = await #expect(throws: StationClientError.self) { try await client.removeFollower(uid: "someone-0000000") }
        #expect(stale?.kind == .unauthorized)
        #expect(stale?.stationMessage == "stale request")
        #expect(rig.emulator.requests.count(route) == before + 2)

        rig.emulator.faults.failNextRequests(1, status: 403, body: #"{"detail":"device revoked"}"#, route: route)
        let forbidden = await #expect(throws: StationClientError.self) { try await client.removeFollower(uid: "someone-0000000") }
        #expect(forbidden?.kind == .unauthorized)
        #expect(forbidden?.status == 403)
    }

    @Test("Content the manifest lists but neither the station nor the gateway has is .contentLost")
    func contentLost() async throws {
        let rig = try StationRig.inProcess(losesResharedContent: true)
        let client = try await rig.pair()
        let post = try await client.publish(data: Data("gone".utf8), metadata: Fixture.drive("gone", size: 4))
        _ = try await client.unsafeReshareInPlace(postCID: post.postCID, audience: .selfOnly)
        let inMemory = await #expect(throws: StationClientError.self) { try await client.download(postCID: post.postCID) }
        #expect(inMemory?.kind == .contentLost)
        #expect(inMemory?.status == 404)
        #expect(inMemory?.stationMessage == "content not found")
        try await Fixture.withTemporaryDirectory { directory in
            let toFile = await #expect(throws: StationClientError.self) {
                try await client.download(postCID: post.postCID, to: directory.appendingPathComponent("gone"))
            }
            #expect(toFile?.kind == .contentLost)
            try Fixture.expectEmpty(directory)

            // A station that is down (not a 404) is not lost content: the gateway's answer decides.
            let kept = try await client.publish(data: Data("kept".utf8), metadata: Fixture.drive("kept", size: 4))
            rig.emulator.faults.failNextRequests(1, status: 503, route: RequestRoute("GET", pathPrefix: "/content/"))
            #expect(try await client.download(postCID: kept.postCID) == Data("kept".utf8))
        }
    }

    @Test("A transport that cannot pin is .pinningUnsupported, not .unreachable; nothing is sent")
    func pinningUnsupported() async throws {
        let rig = try StationRig.inProcess()
        let pin = try PublicKeyFingerprint(sha256: [UInt8](repeating: 7, count: 32))
        // Pins apply to https only (the SDK refuses them on plain http).
        let https = try #require(URL(string: "https://station.test"))
        let before = rig.emulator.requests.entries.count
        let error = await #expect(throws: StationClientError.self) {
            _ = try await StationConnection.read(.profile, at: StationOrigin(url: https, pins: [pin]),
                                                 transport: NonPinningTransport(base: rig.transport))
        }
        #expect(error?.kind == .pinningUnsupported)
        #expect(error?.transportError?.kind == .pinningUnsupported)
        #expect(rig.emulator.requests.entries.count == before)
    }

    @Test("A file that cannot be read or written is .localFile")
    func localFile() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let absent = directory.appendingPathComponent("absent.bin")
            let unreadable = await #expect(throws: StationClientError.self) {
                try await client.publish(fileAt: absent, metadata: Fixture.drive("absent", size: 0))
            }
            #expect(unreadable?.kind == .localFile)
            #expect(unreadable?.message.contains(absent.path) == true)
            #expect(rig.count("POST", "/post") == 0)

            let post = try await client.publish(data: Data("f".utf8), metadata: Fixture.drive("f", size: 1))
            let nowhere = directory.appendingPathComponent("no-such-directory").appendingPathComponent("f")
            let unwritable = await #expect(throws: StationClientError.self) {
                try await client.download(postCID: post.postCID, to: nowhere)
            }
            #expect(unwritable?.kind == .localFile)
        }
    }
}

@Suite("Error kinds are values that can grow")
struct ErrorKindValueTests {
    /// What an app writes: a `switch` over the kind with `default:`.
    static func decision(_ kind: StationClientError.Kind) -> String {
        switch kind {
        case .throttled: "wait"
        case .unauthorized, .notPaired: "pair again"
        case .notFound, .contentLost: "gone"
        default: "tell the user"
        }
    }

    @Test("An error caught as any Error converts back: the SDK's own unchanged, others mapped by kind")
    func convertingCaughtErrors() async throws {
        let client = try await StationRig.pairedInProcess().client
        // A task group hands its errors on as `any Error`: the SDK's error comes through whole.
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await client.approveFollower(uid: "nobody-00000000") }
                try await group.waitForAll()
            }
            Issue.record("approving an unknown follower succeeded")
        } catch {
            let converted = StationClientError(error)
            #expect(converted.kind == .notFound)
            #expect(converted.status == 404)
            #expect(converted.operation == "POST /followers/approve")
        }
        let url = try #require(URL(string: "https://station.invalid/health"))
        let network = StationClientError(TransportError(.dnsFailure, method: .get, url: url, message: "no such host"), operation: "feed refresh")
        #expect(network.kind == .unreachable)
        #expect(network.operation == "feed refresh")
        #expect(network.transportError?.kind == .dnsFailure)
        #expect(StationClientError(TransportError(.cancelled, method: .get, url: url, message: "cancelled")).kind == .cancelled)
        #expect(StationClientError(CancellationError()).kind == .cancelled)
        struct AppDecodingTrouble: Error {}
        let other = StationClientError(AppDecodingTrouble())
        #expect(other.kind == .invalidResponse)
        #expect(other.underlying is AppDecodingTrouble)
        #expect(other.operation == "the app's call")
    }

    @Test("A kind equals itself, not another, matches in a switch and prints its name")
    func stationClientErrorKind() {
        #expect(StationClientError.Kind.notFound == .notFound)
        #expect(StationClientError.Kind.notFound != .contentLost)
        #expect(Set<StationClientError.Kind>([.station, .station, .keyChanged]).count == 2)
        #expect(Self.decision(.throttled) == "wait")
        #expect(Self.decision(.notPaired) == "pair again")
        #expect(Self.decision(.contentLost) == "gone")
        #expect(Self.decision(.integrity) == "tell the user")
        #expect("\(StationClientError.Kind.invalidNamespace)" == "invalidNamespace")
        let error = StationClientError(.tooLarge, operation: "POST /post", message: "too big", limit: 10)
        #expect(error.description == "POST /post: too big (limit 10 bytes)")
    }

    @Test("A pairing failure carries its details; its kind compares without them")
    func pairingFailure() {
        let wrong = PairingFailure.wrongPIN(attemptsLeft: 3)
        #expect(wrong.kind == .wrongPIN && wrong.attemptsLeft == 3 && wrong.stationMessage == nil)
        #expect(wrong == .wrongPIN(attemptsLeft: 3))
        #expect(wrong != .wrongPIN(attemptsLeft: 2))
        #expect(wrong.kind == PairingFailure.wrongPIN(attemptsLeft: 2).kind)
        let gone = PairingFailure.sessionGone("expired")
        #expect(gone.kind == .sessionGone && gone.stationMessage == "expired" && gone.attemptsLeft == nil)
        #expect(gone != .sessionGone("locked") && gone != .throttled("expired"))
        #expect(PairingFailure.invalidKeys("bad").kind != PairingFailure.throttled("bad").kind)
        #expect(PairingFailure.cancelledByUser == .cancelledByUser && PairingFailure.cancelledByUser != .invalidPINFormat)
        #expect("\(PairingFailure.throttled("slow"))" == "the station is throttling pairing (slow); wait and retry")
        #expect("\(PairingFailure.invalidKeys("no"))" == "the station rejected the device's keys (no)")
        #expect("\(PairingFailure.cancelledByUser)" == "cancelled" && "\(gone.kind)" == "sessionGone")
        let kind: String = switch gone.kind {
        case .wrongPIN: "retry"
        case .sessionGone: "start again"
        default: "other"
        }
        #expect(kind == "start again")
    }

    @Test("An answer past the response limit is .invalidResponse naming the limit")
    func responseTooLargeWraps() throws {
        let url = try #require(URL(string: "https://station.test/followers"))
        let transport = TransportError(.responseTooLarge(limit: 64), method: .get, url: url, message: "too long")
        let error = StationClientError.wrap(transport, operation: "GET /followers")
        #expect(error.kind == .invalidResponse)
        #expect(error.message == "the answer is longer than the 64 bytes this call allows")
        #expect(error.transportError?.kind.limit == 64)
    }
}
