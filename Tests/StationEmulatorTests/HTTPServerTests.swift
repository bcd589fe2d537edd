@testable import CipherStationEmulator
import Foundation
import Manifest
import StationEmulator
import Testing
import Transport
import OrderedJSON

/// The HTTP layer: chunked bodies, keep-alive, concurrency, large heads; and the in-process transport.
@Suite("Emulator: HTTP server and in-process transport")
struct HTTPServerTests {
    @Test func chunkedBodiesLargeHeadsAndKeepAlive() throws {
        let harness = try Harness()
        let port = UInt16(try #require(harness.emulator.stationURL?.port))
        // A chunked /delegate/start, written by hand on one connection, then a second request on it.
        let body = Array(#"{"device_uid":"d","mlkem_public_key":"ab","mldsa_public_key":"cd"}"#.utf8)
        let chunked = "POST /delegate/start HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n"
            + "X-Padding: \(String(repeating: "p", count: 24_000))\r\n\r\n"
            + String(format: "%x\r\n", 10) + String(decoding: body[0..<10], as: UTF8.self) + "\r\n"
            + String(format: "%x\r\n", body.count - 10) + String(decoding: body[10...], as: UTF8.self) + "\r\n0\r\n\r\n"
        let socket = try RawSocket(port: port)
        try socket.write(Array(chunked.utf8))
        let first = try socket.readResponse()
        #expect(first.status == 400 && first.body == Array(#"{"detail":"device_mlkem_public_key must be 2368 hex chars"}"#.utf8))
        try socket.write(Array("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try socket.readResponse().status == 200)
    }

    @Test func concurrentConnections() async throws {
        let harness = try Harness()
        let port = UInt16(try #require(harness.emulator.stationURL?.port))
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread {
                            let client = RawHTTPClient(port: port)
                            let status = (0..<5).map { _ in (try? client.send(method: "GET", path: "/profile").status) ?? 0 }
                            continuation.resume(returning: status.allSatisfy { $0 == 200 } ? 200 : 0)
                        }.start()
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 16))
    }

    @Test func inProcessTransportRunsTheSameRoutes() async throws {
        let emulator = try StationEmulator()
        let transport = emulator.transport
        let base = try #require(URL(string: "http://station.invalid"))
        var response = try await transport.send(HTTPRequest(method: .get, url: base.appendingPathComponent("health")))
        #expect(response.status == 200 && response.headers["date"] != nil)
        #expect(response.body.data == Data(#"{"status":"healthy","checks":{"database":true,"ipfs":true,"identity":true}}"#.utf8))

        let device = TestDevice(uid: emulator.uid, deviceUID: "in-process")
        let start = WireJSON.serialize(.object(["device_uid": "in-process", "mlkem_public_key": .string(device.mlkemHex),
                                                "mldsa_public_key": .string(device.mldsaHex)]))
        response = try await transport.send(HTTPRequest(method: .post, url: base.appendingPathComponent("delegate/start"),
                                                        headers: ["Content-Type": "application/json"]), body: .bytes(Data(start)))
        let startData = try #require(response.body.data)
        let pairingID = try #require(try WireJSON.parse(startData)["pairing_id"]?.stringValue)
        let pin = try #require(emulator.log.latestPIN)
        let confirm = WireJSON.serialize(.object(["pairing_id": .string(pairingID), "pin": .string(pin)]))
        response = try await transport.send(HTTPRequest(method: .post, url: base.appendingPathComponent("delegate/confirm")),
                                             body: .bytes(Data(confirm)))
        #expect(response.status == 200)

        let headers = try device.signer().sign(method: "GET", path: "/followers", body: [UInt8]())
        response = try await transport.send(HTTPRequest(method: .get, url: base.appendingPathComponent("followers"),
                                                        headers: HTTPHeaders(headers.fields.map { ($0.name, $0.value) })))
        #expect(response.status == 200 && response.body.data == Data(#"{"status":"ok","followers":[]}"#.utf8))

        emulator.faults.closeNextResponsesMidBody(1)
        await #expect(throws: TransportError.self) {
            try await transport.send(HTTPRequest(method: .get, url: base.appendingPathComponent("profile")))
        }
    }
}

/// A connection written to and read from byte by byte, for requests no client library would send.
final class RawSocket {
    private let client: RawHTTPClient

    init(port: UInt16) throws { client = RawHTTPClient(port: port) }

    func write(_ bytes: [UInt8]) throws { try client.writeRaw(bytes) }

    func readResponse() throws -> RawHTTPClient.Response { try client.readRawResponse() }

    /// Reads a response head only (for HEAD), ignoring its declared length.
    func readHead() throws -> RawResponse {
        let response = try client.readRawResponse(bodyless: true)
        return RawResponse(status: response.status, headers: response.headers, body: response.body)
    }
}

extension HTTPServerTests {
    @Test func headAnswersWithTheHeadOnly() throws {
        let harness = try Harness()
        let port = UInt16(try #require(harness.emulator.stationURL?.port))
        let socket = try RawSocket(port: port)
        try socket.write(Array("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        // The HEAD response declares the GET body's length but carries none, so the next response
        // on the connection is read cleanly.
        let head = try socket.readHead()
        #expect(head.status == 200 && head.header("content-length") == "75")
        let get = try socket.readResponse()
        #expect(get.status == 200 && get.body.count == 75)
    }
}
