import Foundation
import PQCrypto
@testable import StationClient
import Testing
import Transport

/// A transport that answers each request with `answer` and keeps what it was sent.
private final class ScriptedTransport: HTTPTransport, Sendable {
    let requests = Locked<[HTTPRequest]>([])
    private let answer: @Sendable (_ index: Int, _ request: HTTPRequest) throws -> HTTPResponse

    init(_ answer: @escaping @Sendable (_ index: Int, _ request: HTTPRequest) throws -> HTTPResponse) {
        self.answer = answer
    }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        let index = requests.withLock { requests in
            requests.append(request)
            return requests.count - 1
        }
        return try answer(index, request)
    }

    func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        throw TransportError.probingUnsupported(at: url, reason: "scripted")
    }

    var sent: [HTTPRequest] { requests.value }
}

private func json(_ status: Int, _ text: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: .data(Data(text.utf8)))
}

/// An HTTP `Date` header `seconds` after now.
private func httpDate(secondsFromNow seconds: Int64) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
}

private func connection(
    _ transport: ScriptedTransport, keyStore: any KeyStore = InMemoryKeyStore(), endpoint: String = "http://station.test"
) throws -> StationConnection {
    let credentials = DeviceCredentials(
        kemPrivateKey: MLKEM768.PrivateKey(), signingPrivateKey: MLDSA65.PrivateKey(), deviceUID: "phone-0001",
        stationUID: "station-uid", stationKEMPublicKeyHex: String(repeating: "ab", count: 1184),
        endpoint: try #require(URL(string: endpoint)))
    // No gateway: a failed call cannot look for a new endpoint, so every test sees its own requests only.
    let configuration = StationClientConfiguration(namespace: "drive", keyStore: keyStore, transport: transport)
    return StationConnection(credentials: credentials, configuration: configuration)
}

private func signedHeaderCount(_ request: HTTPRequest) -> Int {
    request.headers.fields.filter { $0.name.lowercased().hasPrefix("x-cipher-") }.count
}

@Suite("The connection: one send for signed and unsigned calls")
struct StationConnectionTests {
    @Test("A signed call carries the six x-cipher headers, an unsigned one none; both go to the endpoint's path")
    func signedAndUnsigned() async throws {
        let transport = ScriptedTransport { _, _ in json(200, #"{"status":"ok"}"#) }
        let connection = try connection(transport)
        let timeouts = StationClientConfiguration.defaultRequestTimeouts
        _ = try await connection.send(.signed(.post, "/rewrap", body: .json(Array("{}".utf8)), timeouts: timeouts, operation: "signed"))
        _ = try await connection.send(.unsigned(.get, "/profile", limit: ResponseLimit.small, timeouts: timeouts))
        let sent = transport.sent
        try #require(sent.count == 2)
        #expect(signedHeaderCount(sent[0]) == 6)
        #expect(sent[0].headers["Content-Type"] == "application/json")
        #expect(sent[0].url.absoluteString == "http://station.test/rewrap")
        #expect(signedHeaderCount(sent[1]) == 0)
        #expect(sent[1].url.absoluteString == "http://station.test/profile")
    }

    @Test("A tunnel's 502 and a non-JSON 503 are unreachable for signed and unsigned calls alike; the station's JSON 503 is an answer")
    func tunnelFailures() async throws {
        let timeouts = StationClientConfiguration.defaultRequestTimeouts
        for (status, body) in [(502, "<html>Bad Gateway</html>"), (503, "Service Unavailable"), (530, "")] {
            let transport = ScriptedTransport { _, _ in json(status, body) }
            let connection = try connection(transport)
            for request in [StationCall.signed(.get, "/followers", timeouts: timeouts, operation: "GET /followers"),
                            .unsigned(.get, "/health", limit: ResponseLimit.small, timeouts: timeouts)] {
                let error = await #expect(throws: StationClientError.self) { try await connection.send(request) }
                #expect(error?.kind == .unreachable)
                #expect(error?.status == status)
            }
        }
        let degraded = ScriptedTransport { _, _ in json(503, #"{"status":"degraded"}"#) }
        let response = try await connection(degraded).send(.unsigned(.get, "/health", limit: ResponseLimit.small, timeouts: timeouts))
        #expect(response.status == 503)
    }

    @Test("A stale-request answer is signed again once with the station's clock; a second one is returned as it is")
    func staleClockRetriedOnce() async throws {
        let stale = json(401, #"{"detail":"stale request"}"#, headers: ["Date": httpDate(secondsFromNow: 600)])
        let transport = ScriptedTransport { _, _ in stale }
        let connection = try connection(transport)
        let response = try await connection.send(
            .signed(.get, "/followers", timeouts: StationClientConfiguration.defaultRequestTimeouts, operation: "GET /followers"))
        #expect(response.status == 401)
        #expect(transport.sent.count == 2)
        #expect((540...660).contains(connection.clockOffset))
        let timestamps = transport.sent.compactMap { $0.headers["x-cipher-ts"].flatMap { Int64($0) } }
        try #require(timestamps.count == 2)
        #expect((540...660).contains(timestamps[1] - timestamps[0]), "the retry is signed with the learned offset")
    }

    @Test("An unsigned call is never retried for a stale answer")
    func unsignedNotRetried() async throws {
        let transport = ScriptedTransport { _, _ in json(401, #"{"detail":"stale request"}"#, headers: ["Date": httpDate(secondsFromNow: 600)]) }
        let connection = try connection(transport)
        let response = try await connection.send(
            .unsigned(.get, "/profile", limit: ResponseLimit.small, timeouts: StationClientConfiguration.defaultRequestTimeouts))
        #expect(response.status == 401)
        #expect(transport.sent.count == 1)
        #expect(connection.clockOffset == 0)
    }

    @Test("A call budget counts the stale-clock retry; none left fails before anything is sent")
    func budgetCountsRetries() async throws {
        let transport = ScriptedTransport { index, _ in
            index == 0 ? json(401, #"{"detail":"stale request"}"#, headers: ["Date": httpDate(secondsFromNow: 600)])
                : json(200, #"{"status":"ok"}"#)
        }
        let connection = try connection(transport)
        let budget = CallBudget(calls: 1)
        let error = await #expect(throws: StationClientError.self) {
            try await connection.send(.signed(.get, "/followers", timeouts: StationClientConfiguration.defaultRequestTimeouts,
                                              operation: "GET /followers"), budget: budget)
        }
        #expect(error?.kind == .refused)
        #expect(transport.sent.count == 1)
    }

    @Test("Headers outside the signature are added as given")
    func unsignedHeaders() async throws {
        let transport = ScriptedTransport { _, _ in json(206, "") }
        let connection = try connection(transport)
        var request = StationCall.signed(.get, "/content/x", timeouts: StationClientConfiguration.defaultRequestTimeouts,
                                            operation: "GET /content/x")
        request.unsignedHeaders = [("Range", "bytes=10-")]
        _ = try await connection.send(request)
        #expect(transport.sent.first?.headers["Range"] == "bytes=10-")
        #expect(signedHeaderCount(try #require(transport.sent.first)) == 6)
    }

    @Test("An unreachable station with no way to find it again stays unreachable, with the failed search attached")
    func unreachableWithoutGateway() async throws {
        let transport = ScriptedTransport { _, request in
            throw TransportError(.cannotConnect, method: request.method, url: request.url, message: "refused")
        }
        let connection = try connection(transport)
        let error = await #expect(throws: StationClientError.self) {
            try await connection.send(.unsigned(.get, "/health", limit: ResponseLimit.small,
                                                timeouts: StationClientConfiguration.defaultRequestTimeouts))
        }
        #expect(error?.kind == .unreachable)
        #expect(error?.message.contains("no new endpoint found") == true)
        #expect(transport.sent.count == 1)
    }

    @Test("Credential changes are saved only when something changed")
    func credentialUpdates() async throws {
        let store = InMemoryKeyStore()
        let connection = try connection(ScriptedTransport { _, _ in json(200, "{}") }, keyStore: store)
        try await connection.updateCredentials { _ in false }
        #expect(try await store.loadSecret(KeyStoreItem.credentials, operation: "test") == nil)
        try await connection.updateCredentials { credentials in
            credentials.ipnsSequence = 7
            return true
        }
        let saved = try #require(try await store.loadSecret(KeyStoreItem.credentials, operation: "test"))
        #expect(try DeviceCredentials(encoded: saved).ipnsSequence == 7)
        try await connection.forget()
        #expect(try await store.loadSecret(KeyStoreItem.credentials, operation: "test") == nil)
    }
}
