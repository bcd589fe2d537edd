import HTTPTransportConformance
import LoopbackHTTP
import StationEmulator
import Testing
import Transport

/// The emulator's `InProcessTransport` against the transport conformance suite: its in-process
/// delivery (the code every `emulator.transport` request goes through) with each case's own
/// `LoopbackHTTPServer` handler as the target, found by the port of the case's URL.
///
/// Not run: the TLS cases (in process there is no TLS handshake, so nothing to pin or verify), and
/// the cases in ``notApplicable``, each with its reason.
@Suite("InProcessTransport: conformance")
struct InProcessConformanceTests {
    /// Cases that check what only a wire connection has.
    static let notApplicable: [String: String] = [
        "connectionsAreReused": "it counts TCP connections; in process there are none to reuse",
        "chunkedAndCloseDelimitedResponses":
            "its handler writes chunked framing bytes by hand; in process the handler's bytes are the body, not HTTP/1.1 framing",
    ]

    static let caseNames = HTTPTransportConformance.cases.map(\.name).filter { notApplicable[$0] == nil }

    @Test(arguments: caseNames)
    func conformance(_ name: String) async throws {
        let conformanceCase = try #require(HTTPTransportConformance.conformanceCase(named: name))
        try await conformanceCase.run(against: InProcessTransport(delivery: .loopbackServers))
    }

    /// Every case left out is one the suite has, so a renamed case cannot drop out silently.
    @Test func leftOutCasesExist() {
        let names = Set(HTTPTransportConformance.cases.map(\.name))
        #expect(Set(Self.notApplicable.keys).subtracting(names).isEmpty)
    }
}
