@testable import CipherStationEmulator
import Foundation
import Manifest
import ClassicalCrypto
@testable import StationEmulator
import Testing
import Transport

/// Faults aimed at one route, the request log, replaced content, the station's reshare loss, and
/// what the in-process transport reports.
@Suite("Emulator: targeted faults, request log, replaced content")
struct TargetedFaultTests {
    @Test("A throttle applies to its route and server until reset; a later one replaces it, a rate of 0 removes it")
    func throttleRates() throws {
        let faults = FaultInjector()
        let content = RequestRoute("GET", pathPrefix: "/content/")
        faults.throttle(content, toBytesPerSecond: 4096)
        #expect(faults.throttleRate(method: "GET", path: "/content/Qm1", server: .station) == 4096)
        #expect(faults.throttleRate(method: "GET", path: "/profile", server: .station) == nil)
        #expect(faults.throttleRate(method: "GET", path: "/content/Qm1", server: .gateway) == nil)
        faults.throttle(content, toBytesPerSecond: 1024)
        #expect(faults.throttleRate(method: "GET", path: "/content/Qm1", server: .station) == 1024)
        faults.throttle(content, toBytesPerSecond: 0)
        #expect(faults.throttleRate(method: "GET", path: "/content/Qm1", server: .station) == nil)
        faults.throttle(toBytesPerSecond: -5)   // bad input: nothing to throttle, no crash
        #expect(faults.throttleRate(method: "GET", path: "/x", server: .station) == nil)
        faults.throttle(RequestRoute("GET", pathPrefix: "/ipfs/"), toBytesPerSecond: 10, server: .gateway)
        faults.reset()
        #expect(faults.throttleRate(method: "GET", path: "/ipfs/Qm1", server: .gateway) == nil)
    }

    @Test("A throttled gateway answer arrives whole, in steps")
    func throttledAnswerArrivesWhole() async throws {
        let emulator = try StationEmulator()
        let body = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0) })
        let post = emulator.core.blocks.add(body)
        emulator.faults.throttle(RequestRoute("GET", pathPrefix: "/ipfs/"), toBytesPerSecond: 200_000, server: .gateway)
        let url = try #require(URL(string: "http://gateway.test/ipfs/\(post)"))
        let reports = Locked<[TransferProgress]>([])
        let response = try await emulator.transport.send(HTTPRequest(method: .get, url: url), body: .none, options: TransferOptions(
            progress: { progress in reports.withLock { $0.append(progress) } }))
        #expect(response.status == 200)
        #expect(response.body.data == body)
        #expect(Set(reports.value.map(\.bytesReceived)).count >= 4)
    }

    static let confirm = RequestRoute("POST", path: "/delegate/confirm")

    /// `POST /delegate/start` for a fresh device; returns the pairing id.
    static func startPairing(_ harness: Harness) throws -> String {
        let device = TestDevice(uid: harness.uid, deviceUID: "device-\(UUID().uuidString.prefix(8))")
        let started = try harness.json("POST", "/delegate/start", ["device_uid": .string(device.deviceUID),
                                                                   "mlkem_public_key": .string(device.mlkemHex),
                                                                   "mldsa_public_key": .string(device.mldsaHex)])
        return try #require(try started.object()["pairing_id"]?.stringValue)
    }

    @Test func routesMatchExactPathsOrPrefixesAndMethods() {
        #expect(Self.confirm.matches(method: "POST", path: "/delegate/confirm"))
        #expect(!Self.confirm.matches(method: "GET", path: "/delegate/confirm"))
        #expect(!Self.confirm.matches(method: "POST", path: "/delegate/confirm/x"))
        let content = RequestRoute("get", pathPrefix: "/content/")
        #expect(content.matches(method: "GET", path: "/content/QmX") && !content.matches(method: "GET", path: "/contents"))
        #expect(RequestRoute(path: "/post").matches(method: "DELETE", path: "/post"))
        #expect(RequestRoute.any.matches(method: "PATCH", path: "/anything"))
        #expect(content.description == "GET /content/*" && Self.confirm.description == "POST /delegate/confirm")
    }

    @Test func aFailureAimedAtOneRouteLeavesTheOthersAlone() throws {
        let harness = try Harness()
        let faults = harness.emulator.faults
        let body = #"{"detail":"too many failed pairing attempts; pairing is temporarily locked"}"#
        faults.failNextRequests(1, status: 429, body: body, route: Self.confirm)
        #expect(faults.pendingFaultCount == 1)
        #expect(try harness.send("GET", "/health").status == 200)
        let pairingID = try Self.startPairing(harness)
        #expect(faults.pendingFaultCount == 1)
        let pin = try #require(harness.emulator.log.latestPIN)
        let throttled = try harness.json("POST", "/delegate/confirm", ["pairing_id": .string(pairingID), "pin": .string(pin)])
        #expect(throttled.status == 429 && throttled.text == body)
        #expect(faults.pendingFaultCount == 0)
        // The fault answered before the route ran: the session is still pending and pairs now.
        let confirmed = try harness.json("POST", "/delegate/confirm", ["pairing_id": .string(pairingID), "pin": .string(pin)])
        #expect(confirmed.status == 200, "\(confirmed.text)")
        #expect(harness.emulator.pairedDeviceUIDs.count == 1)

        // A standing failure lasts until reset.
        let device = try harness.pair()
        let missing = "QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4"
        faults.failNextRequests(.max, status: 503, body: #"{"detail":"content store unavailable"}"#,
                                route: RequestRoute("GET", pathPrefix: "/content/"))
        #expect(faults.pendingFaultCount == .max)
        for _ in 0..<3 { #expect(try PostConformanceTests.content(harness, device, missing).status == 503) }
        #expect(try harness.send("GET", "/health").status == 200)
        faults.reset()
        #expect(faults.pendingFaultCount == 0)
        #expect(try PostConformanceTests.content(harness, device, missing).status == 404)
    }

    @Test func aCutAimedAtOneRouteStopsAfterTheChosenBytes() async throws {
        let harness = try Harness()
        let faults = harness.emulator.faults
        let profile = RequestRoute("GET", path: "/profile")
        let transport = harness.emulator.transport
        let url = try #require(URL(string: "http://station.test/profile"))
        let whole = try #require(try await transport.send(HTTPRequest(method: .get, url: url), body: .none).body.data)

        // In process, a streamed answer yields exactly the bytes before the cut, then breaks.
        faults.closeNextResponsesMidBody(1, route: profile, afterBytes: 100)
        #expect(try harness.send("GET", "/health").status == 200)
        let response = try await transport.send(HTTPRequest(method: .get, url: url), body: .none,
                                                options: TransferOptions(response: .stream))
        guard case .stream(let stream) = response.body else {
            Issue.record("expected a streamed body")
            return
        }
        var received = Data()
        let error = await #expect(throws: TransportError.self) {
            for try await chunk in stream { received.append(chunk) }
        }
        #expect(error?.kind == .connectionLost)
        #expect(received == whole.prefix(100))
        #expect(faults.pendingFaultCount == 0)

        // An answer held in memory throws at once; over HTTP the connection drops mid-body.
        faults.closeNextResponsesMidBody(2, route: profile, afterBytes: 100)
        await #expect(throws: TransportError.self) { try await transport.send(HTTPRequest(method: .get, url: url), body: .none) }
        #expect(throws: (any Error).self) { try harness.send("GET", "/profile") }
        #expect(try harness.send("GET", "/profile").body == [UInt8](whole))
        // A body no longer than the cut arrives whole.
        faults.closeNextResponsesMidBody(1, route: profile, afterBytes: whole.count)
        #expect(try await transport.send(HTTPRequest(method: .get, url: url), body: .none).body.data == whole)
    }

    @Test func theRequestLogRecordsEachAnswer() async throws {
        let harness = try Harness(publishesEndpoint: true)
        let requests = harness.emulator.requests
        let port = try #require(harness.emulator.stationURL?.port)
        let gatewayPort = UInt16(try #require(harness.emulator.gatewayURL?.port))
        #expect(try harness.send("GET", "/health").status == 200)
        #expect(try harness.send("GET", "/nowhere").status == 404)
        harness.emulator.faults.failNextRequests(1, status: 502)
        #expect(try harness.send("GET", "/health").status == 502)
        let gateway = RawHTTPClient(port: gatewayPort)
        #expect(try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)").status == 200)
        #expect(requests.entries.map(\.description) == [
            "station GET 127.0.0.1:\(port)/health → 200", "station GET 127.0.0.1:\(port)/nowhere → 404",
            "station GET 127.0.0.1:\(port)/health → 502", "gateway GET 127.0.0.1:\(gatewayPort)/ipns/\(harness.emulator.ipnsName) → 200",
        ])
        #expect(requests.entries.first?.server == .station && requests.entries.last?.server == .gateway)
        #expect(requests.count(RequestRoute("GET", path: "/health")) == 2)
        #expect(requests.count(RequestRoute(pathPrefix: "/ipns/")) == 1)
        #expect(requests.count(.any) == 4)

        // In process, the URL's host is sent as `Host`, and progress is reported both ways.
        requests.removeAll()
        let progress = Locked<[TransferProgress]>([])
        let url = try #require(URL(string: "http://station.test:8443/health"))
        let response = try await harness.emulator.transport.send(
            HTTPRequest(method: .get, url: url), body: .none,
            options: TransferOptions(progress: { update in progress.withLock { $0.append(update) } }))
        let length = Int64(try #require(response.body.data).count)
        #expect(requests.entries.map(\.description) == ["station GET station.test:8443/health → 200"])
        #expect(progress.value.last == TransferProgress(bytesSent: 0, expectedBytesToSend: 0, bytesReceived: length,
                                                        expectedBytesToReceive: length))
    }

    @Test func replacedContentIsServedInsteadOfTheStoredFile() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let posted = try harness.post(device)
        let stored = try #require(harness.emulator.block(posted.cid))
        let gateway = RawHTTPClient(port: UInt16(try #require(harness.emulator.gatewayURL?.port)))
        harness.emulator.faults.replaceContent(of: posted.cid, with: Data("not the file".utf8))
        var response = try PostConformanceTests.content(harness, device, posted.cid)
        #expect(response.status == 200 && response.text == "not the file")
        response = try PostConformanceTests.content(harness, device, posted.cid, range: "bytes=4-6")
        #expect(response.status == 206 && response.text == "the" && response.header("content-range") == "bytes 4-6/12")
        let fromGateway = try gateway.send(method: "GET", path: "/ipfs/\(posted.cid)")
        #expect(fromGateway.status == 200 && String(decoding: fromGateway.body, as: UTF8.self) == "not the file")
        // The repository itself is untouched, and reset serves it again.
        #expect(harness.emulator.block(posted.cid) == stored)
        harness.emulator.faults.reset()
        #expect(Data(try PostConformanceTests.content(harness, device, posted.cid).body) == stored)
    }

    @Test func aReshareCanLoseTheBytesLikeTheStation() throws {
        let harness = try Harness(losesResharedContent: true)
        let device = try harness.pair()
        let posted = try harness.post(device)
        let gateway = RawHTTPClient(port: UInt16(try #require(harness.emulator.gatewayURL?.port)))
        #expect(try gateway.send(method: "GET", path: "/ipfs/\(posted.cid)").status == 200)
        let shared = try harness.signedJSON(device, "/post/share", ["post_cid": .string(posted.cid), "audience_mode": "all"])
        #expect(shared.status == 200, "\(shared.text)")
        // The entry stays in the manifest, but its bytes are gone from /content and the gateway.
        #expect(harness.emulator.manifest.entry(forPostCID: posted.cid) != nil)
        let content = try PostConformanceTests.content(harness, device, posted.cid)
        #expect(content.status == 404 && content.text == #"{"detail":"content not found"}"#)
        #expect(try gateway.send(method: "GET", path: "/ipfs/\(posted.cid)").status == 404)
        #expect(harness.emulator.block(posted.cid) == nil)
    }

    @Test func pairedDevicesAreListedWithoutTheStation() throws {
        let harness = try Harness()
        #expect(harness.emulator.pairedDeviceUIDs.isEmpty)
        let first = try harness.pair(deviceUID: "phone-b")
        let second = try harness.pair(deviceUID: "phone-a")
        #expect(harness.emulator.pairedDeviceUIDs == [second.deviceUID, first.deviceUID])
    }
}
