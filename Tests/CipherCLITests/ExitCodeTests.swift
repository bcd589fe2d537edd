@testable import CipherCLI
import Foundation
import StationClient
import Testing
import Transport

@Suite("Exit codes of station client errors")
struct ExitCodeTests {
    static func exitCode(_ error: StationClientError) -> ExitCode { CLIError.client(error).exitCode }

    @Test func gatewayFailuresAreUnreachableOnlyWhenTheNetworkFailed() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/ipfs/x"))
        let network = TransportError(.cannotConnect, method: .get, url: url, message: "connection refused")
        #expect(Self.exitCode(StationClientError(.gateway, operation: "fetching", message: "down", transportError: network))
            == .unreachable)
        #expect(Self.exitCode(StationClientError(.gateway, operation: "fetching", message: "refused", status: 404)) == .failure)
        #expect(Self.exitCode(StationClientError(.gateway, operation: "fetching", message: "refused", status: 502)) == .failure)
        // A station's refusal stays 3.
        #expect(Self.exitCode(StationClientError(.station, operation: "listing", message: "refused", status: 404)) == .refused)
    }
}
