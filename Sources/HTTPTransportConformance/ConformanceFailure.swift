/// A transport did not do what a conformance case checks: which case, which check, what was
/// expected, and what happened instead.
public struct ConformanceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The ``ConformanceCase/name`` (or ``TLSConformanceCase/name``) of the failing case.
    public var caseName: String
    /// What was being checked, for example `"status of GET /status/204"`.
    public var check: String
    /// What a conforming transport does.
    public var expected: String
    /// What this transport did.
    public var got: String

    /// Creates a failure.
    public init(caseName: String, check: String, expected: String, got: String) {
        self.caseName = caseName
        self.check = check
        self.expected = expected
        self.got = got
    }

    /// `"<case>: <check>: expected <expected>, got <got>"`.
    public var description: String { "\(caseName): \(check): expected \(expected), got \(got)" }
}
