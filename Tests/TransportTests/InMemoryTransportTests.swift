import Foundation
import Testing
import Transport

/// The protocol is simple to adopt without a network: an in-memory conformance built on the body
/// helpers, exercised through the protocol's convenience `send`.
@Suite("Transport: an in-memory conformance")
struct InMemoryTransportTests {
    /// Echoes the request body, upper-cases the method into a header, answers 404 for `/missing`.
    struct EchoTransport: HTTPTransport {
        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            try request.validate()
            let bytes = try await body.collect(upTo: 1 << 20, for: request)
            let status = request.url.path == "/missing" ? 404 : 200
            return HTTPResponse(status: status, headers: ["X-Method": request.method.rawValue],
                                body: try options.response.deliver(bytes, for: request))
        }

        func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
            throw TransportError.probingUnsupported(at: url, reason: "an echo has no TLS")
        }
    }

    @Test func everyBodyKindRoundTrips() async throws {
        let transport: any HTTPTransport = EchoTransport()
        let url = try #require(URL(string: "https://station.example/echo"))
        let payload = Data("payload".utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inmemory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("in.bin")
        try payload.write(to: source)

        let plain = try await transport.send(HTTPRequest(method: .get, url: url))
        #expect(plain.body.data == Data())
        #expect(plain.headers["x-method"] == "GET")
        for body in [HTTPRequestBody.bytes(payload), .file(source), .stream(HTTPBodyStream(payload, chunkSize: 3))] {
            let response = try await transport.send(HTTPRequest(method: .post, url: url), body: body)
            #expect(response.body.data == payload)
        }
        let target = directory.appendingPathComponent("out.bin")
        let toFile = try await transport.send(HTTPRequest(method: .post, url: url), body: .bytes(payload),
                                              options: TransferOptions(response: .file(target)))
        guard case .file(let written, let count) = toFile.body else {
            Issue.record("expected a file")
            return
        }
        #expect(written == target && count == 7)
        #expect(try Data(contentsOf: target) == payload)
        let streamed = try await transport.send(HTTPRequest(method: .post, url: url), body: .bytes(payload),
                                                options: TransferOptions(response: .stream))
        guard case .stream(let stream) = streamed.body else {
            Issue.record("expected a stream")
            return
        }
        #expect(try await stream.collect(upTo: 100) == payload)
        #expect(try await transport.send(HTTPRequest(method: .get, url: try #require(URL(string: "https://s/missing")))).status == 404)
    }

    @Test func helperErrorsAreTransportErrors() async throws {
        let transport = EchoTransport()
        let url = try #require(URL(string: "https://station.example/echo"))
        let request = HTTPRequest(method: .post, url: url)
        func kind(_ body: HTTPRequestBody, _ options: TransferOptions = TransferOptions()) async -> TransportError.Kind? {
            do {
                _ = try await transport.send(request, body: body, options: options)
                return nil
            } catch let error as TransportError {
                return error.kind
            } catch {
                return nil
            }
        }
        #expect(await kind(.bytes(Data(count: 2 << 20))) == .requestBodyFailed)
        #expect(await kind(.file(URL(fileURLWithPath: "/nonexistent/file"))) == .requestBodyFailed)
        #expect(await kind(.stream(HTTPBodyStream(length: 5, HTTPBodyStream(Data(count: 4))))) == .requestBodyFailed)
        #expect(await kind(.bytes(Data(count: 10)), TransferOptions(response: .memory(limit: 9)))?.limit == 9)
        #expect(await kind(.bytes(Data(count: 1)), TransferOptions(response: .file(URL(fileURLWithPath: "/nonexistent/dir/f"))))
            == .responseBodyFailed)
        #expect(await kind(.none, TransferOptions(response: .memory(limit: 0))) == nil)
    }
}
