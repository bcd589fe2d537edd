import Foundation
import Transport

/// The behaviour every `HTTPTransport` promises, as runnable cases: run them against your own
/// transport to check that it honours each duty the protocol's documentation lists.
///
/// The cases serve themselves from a `LoopbackHTTPServer` on 127.0.0.1, so they need no network,
/// no fixtures and no test framework: each throws ``ConformanceFailure`` when the transport
/// misbehaves, which any runner reports. The TLS cases need an endpoint you start yourself (see
/// ``ConformanceTLSEndpoint``).
///
///     for conformanceCase in HTTPTransportConformance.cases {
///         try await conformanceCase.run(against: MyTransport())
///     }
///
/// Cases are independent (each starts its own server) and may run concurrently. None asserts how
/// long anything takes; time limits under test are short (1–2 s) and a case only checks that the
/// right failure happens.
public enum HTTPTransportConformance {
    /// Every case that needs nothing but the transport, in a stable order.
    public static let cases: [ConformanceCase] =
        MessageCases.all + BodyCases.all + StreamingCases.all + RangeCases.all + FailureCases.all

    /// Every case that needs a TLS endpoint, in a stable order.
    public static let tlsCases: [TLSConformanceCase] = TLSCases.all

    /// The case in ``cases`` named `name`, or `nil`.
    public static func conformanceCase(named name: String) -> ConformanceCase? {
        cases.first { $0.name == name }
    }

    /// The case in ``tlsCases`` named `name`, or `nil`.
    public static func tlsCase(named name: String) -> TLSConformanceCase? {
        tlsCases.first { $0.name == name }
    }
}
