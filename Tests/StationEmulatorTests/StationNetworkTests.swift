import Foundation
import LoopbackHTTP
import Manifest
@testable import StationEmulator
import Testing
import Transport
import OrderedJSON

/// The host-routing in-process network (several stations, each up or down) and the per-route
/// faults of ``FaultInjector/inject(_:count:route:server:)``, station and gateway.
@Suite("Emulator: station network, per-route faults")
struct StationNetworkTests {
    static func get(_ transport: some HTTPTransport, _ url: String, response: ResponseDestination = .memory(limit: 1 << 20))
        async throws -> HTTPResponse {
        let url = try #require(URL(string: url))
        return try await transport.send(HTTPRequest(method: .get, url: url), body: .none,
                                        options: TransferOptions(response: response))
    }

    static func uid(_ response: HTTPResponse) throws -> String? {
        try WireJSON.parse([UInt8](response.body.data ?? Data())).objectValue?["uid"]?.stringValue
    }

    static func transportError(_ body: () async throws -> HTTPResponse) async -> TransportError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? TransportError
        }
    }

    @Test func twoStationsAnswerByHostAndEachGoesDownAlone() async throws {
        let network = StationNetwork()
        let alice = try StationEmulator()
        let bob = try StationEmulator()
        network.attach(alice, host: "alice.test", gatewayHost: "gateway.alice.test")
        network.attach(bob, host: "Bob.Test")
        let transport = network.transport

        #expect(try Self.uid(await Self.get(transport, "http://alice.test/profile")) == alice.uid)
        #expect(try Self.uid(await Self.get(transport, "http://bob.test:8080/profile")) == bob.uid)
        #expect(alice.uid != bob.uid)
        // The gateway host serves only the gateway.
        #expect(try await Self.get(transport, "http://gateway.alice.test/profile").status == 404)
        #expect(try await Self.get(transport, "http://gateway.alice.test/ipns/\(alice.ipnsName)").status == 404)
        alice.setEndpoint("http://alice.test")
        let record = try await Self.get(transport, "http://gateway.alice.test/ipns/\(alice.ipnsName)")
        #expect(record.status == 200)
        #expect(try Self.uid(record) == alice.uid)

        network.setDown(true, host: "alice.test")
        #expect(network.isDown(host: "ALICE.test") && !network.isDown(host: "bob.test"))
        let down = await Self.transportError { try await Self.get(transport, "http://alice.test/profile") }
        #expect(down?.kind == .cannotConnect)
        // Its other host and the other station stay up; nothing reached alice's station.
        #expect(try await Self.get(transport, "http://gateway.alice.test/ipns/\(alice.ipnsName)").status == 200)
        #expect(try Self.uid(await Self.get(transport, "http://bob.test/profile")) == bob.uid)
        #expect(alice.requests.entries.count { $0.server == .station && $0.path == "/profile" } == 1)

        let unknown = await Self.transportError { try await Self.get(transport, "http://carol.test/profile") }
        #expect(unknown?.kind == .dnsFailure)
        network.setDown(false, host: "alice.test")
        #expect(try Self.uid(await Self.get(transport, "http://alice.test/profile")) == alice.uid)
        network.detach(host: "bob.test")
        #expect(await Self.transportError { try await Self.get(transport, "http://bob.test/profile") }?.kind == .dnsFailure)
    }

    @Test func aStatusFaultAimsAtOneGatewayRouteAndIsUsedUp() async throws {
        let emulator = try StationEmulator()
        emulator.setEndpoint("http://station.test")
        let transport = emulator.transport
        emulator.faults.inject(.status(404, body: Data("ipfs resolve: not found".utf8)), count: 2,
                               route: RequestRoute("GET", pathPrefix: "/ipns/"), server: .gateway)
        #expect(emulator.faults.pendingFaultCount == 2)
        // A station route with the same prefix rule is not the gateway's.
        #expect(try await Self.get(transport, "http://station.test/profile").status == 200)
        let first = try await Self.get(transport, "http://station.test/ipns/\(emulator.ipnsName)")
        #expect(first.status == 404 && first.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(try await Self.get(transport, "http://station.test/ipns/\(emulator.ipnsName)").status == 404)
        #expect(try await Self.get(transport, "http://station.test/ipns/\(emulator.ipnsName)").status == 200)
        #expect(emulator.faults.pendingFaultCount == 0)
        #expect(emulator.requests.entries.filter { $0.server == .gateway }.map(\.status) == [404, 404, 200])
    }

    @Test func aForgedIPNSAnswerReplacesThePublishedRecord() async throws {
        let emulator = try StationEmulator()
        emulator.setEndpoint("http://station.test")
        let forged = Data(#"{"uid":"someone-else","endpoint":"http://evil.test"}"#.utf8)
        emulator.faults.forgeIPNSAnswer(forged)
        let answer = try await Self.get(emulator.transport, "http://gw.test/ipns/\(emulator.ipnsName)")
        #expect(answer.status == 200 && answer.body.data == forged)
        // Other names still do not resolve.
        #expect(try await Self.get(emulator.transport, "http://gw.test/ipns/k51other").status == 404)
        emulator.faults.reset()
        #expect(try Self.uid(await Self.get(emulator.transport, "http://gw.test/ipns/\(emulator.ipnsName)")) == emulator.uid)
    }

    @Test func aBodyReplacedByNBytesKeepsTheStatusAndProcessesTheRequest() async throws {
        let emulator = try StationEmulator()
        emulator.faults.inject(.replaceBody(byteCount: 300_000), route: RequestRoute("GET", path: "/profile"))
        let answer = try await Self.get(emulator.transport, "http://station.test/profile")
        #expect(answer.status == 200)
        #expect(answer.body.data == PatternBytes(seed: 14).data(offset: 0, count: 300_000))
        #expect(answer.headers["content-length"] == "300000")
        // Past a memory limit it is refused like any large answer.
        emulator.faults.inject(.replaceBody(byteCount: 2_000), route: RequestRoute("GET", path: "/health"))
        let refused = await Self.transportError {
            try await Self.get(emulator.transport, "http://station.test/health", response: .memory(limit: 1_000))
        }
        #expect(refused?.kind == .responseTooLarge && refused?.kind.limit == 1_000)
    }

    @Test func anEndlessBodyNeverEndsInProcess() async throws {
        let emulator = try StationEmulator()
        let route = RequestRoute("GET", path: "/health")
        emulator.faults.inject(.endlessBody, count: 2, route: route)
        let answer = try await Self.get(emulator.transport, "http://station.test/health", response: .stream)
        guard case let .stream(stream) = answer.body else {
            Issue.record("not a stream")
            return
        }
        #expect(stream.length == nil && answer.headers["content-length"] == nil)
        var received = 0
        for try await chunk in stream {
            received += chunk.count
            if received > 4 << 20 { break }
        }
        #expect(received > 4 << 20)
        let refused = await Self.transportError {
            try await Self.get(emulator.transport, "http://station.test/health", response: .memory(limit: 1 << 20))
        }
        #expect(refused?.kind == .responseTooLarge && refused?.kind.limit == 1 << 20)
    }

    @Test func anEndlessBodyOverHTTPRunsPastAnyLength() throws {
        let emulator = try StationEmulator()
        let url = try emulator.start()
        defer { emulator.stop() }
        emulator.faults.inject(.endlessBody, route: RequestRoute("GET", path: "/health"))
        let port = try #require(url.port)
        let received = try Self.readRaw(port: UInt16(port), request: "GET /health HTTP/1.1\r\nHost: x\r\n\r\n", atLeast: 2 << 20)
        let head = String(decoding: received.prefix(512), as: UTF8.self).lowercased()
        #expect(head.hasPrefix("http/1.1 200"))
        #expect(!head.contains("content-length") && head.contains("connection: close"))
        #expect(received.count >= 2 << 20)
    }

    @Test func aCloseMidBodyAndADelayOnAGatewayRoute() async throws {
        let emulator = try StationEmulator()
        emulator.setEndpoint("http://station.test")
        let published = try #require(emulator.publishedPublicDocument)
        let ipns = RequestRoute("GET", pathPrefix: "/ipns/")
        emulator.faults.inject(.closeMidBody(afterBytes: 10), route: ipns, server: .gateway)
        let lost = await Self.transportError { try await Self.get(emulator.transport, "http://gw.test/ipns/\(emulator.ipnsName)") }
        #expect(lost?.kind == .connectionLost)
        emulator.faults.inject(.delay(seconds: 0.2), route: ipns, server: .gateway)
        let started = Date()
        let delayed = try await Self.get(emulator.transport, "http://gw.test/ipns/\(emulator.ipnsName)")
        // A sleep lasts at least as long as asked.
        #expect(Date().timeIntervalSince(started) >= 0.2)
        #expect(delayed.status == 200 && delayed.body.data == published)
        #expect(emulator.faults.pendingFaultCount == 0)
    }

    /// Sends `request` on a fresh connection and reads until `atLeast` bytes came (or the peer closed).
    static func readRaw(port: UInt16, request: String, atLeast: Int) throws -> [UInt8] {
        let descriptor = LoopbackSocket.make()
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        try #require(LoopbackSocket.connects(descriptor, toPort: port))
        let bytes = Array(request.utf8)
        try #require(bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) } == bytes.count)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while received.count < atLeast {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }
}
