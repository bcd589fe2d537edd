// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
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

    @Test func decisionKindsHaveTheirExitCodesAndAdvice() {
        func error(_ kind: StationClientError.Kind, status: Int? = nil, retryAfter: Duration? = nil) -> StationClientError {
            StationClientError(kind, operation: "op", message: "m", status: status, retryAfter: retryAfter)
        }
        // The station's decisions are refusals (3); the same decision made locally, or a local failure, is 1.
        for kind: StationClientError.Kind in [.unauthorized, .throttled, .notShared, .contentLost] {
            #expect(Self.exitCode(error(kind, status: 400)) == .refused, "\(kind)")
        }
        #expect(Self.exitCode(error(.notFound, status: 404)) == .refused)
        #expect(Self.exitCode(error(.tooLarge, status: 413)) == .refused)
        #expect(Self.exitCode(error(.notFound)) == .failure)
        #expect(Self.exitCode(error(.tooLarge)) == .failure)
        #expect(Self.exitCode(error(.localFile)) == .failure)
        #expect(Self.exitCode(error(.pinningUnsupported)) == .failure)
        #expect(CLIError.client(error(.throttled, status: 429, retryAfter: .seconds(30))).description.contains("retry in 30 s"))
        #expect(CLIError.client(error(.unauthorized, status: 401)).description.contains("cipher pair URL"))
        #expect(CLIError.client(error(.contentLost, status: 404)).kind == "contentLost")
    }
}
#endif
