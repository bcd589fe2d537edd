/// Whether a test can start a program here (`python3`, `openssl`, a built executable).
///
/// macOS and Linux can; iOS, tvOS, watchOS and visionOS cannot (no `Process`, and an app may not
/// spawn). A test that starts one carries `.enabled(if: Programs.canStart, "…")`, so there it is
/// skipped with its reason and counted as skipped; the helpers that start programs throw there
/// instead of starting one (``ProgramsUnavailable``, or the helper's own failure type).
public enum Programs {
    #if os(macOS) || os(Linux)
    /// Whether this platform starts programs: it does.
    public static let canStart = true
    #else
    /// Whether this platform starts programs: it does not.
    public static let canStart = false
    #endif
}

/// The error of a helper asked to start a program where none can be started.
public struct ProgramsUnavailable: Error, CustomStringConvertible {
    /// The program it was asked to start.
    public let program: String

    /// The error for `program`.
    public init(_ program: String) { self.program = program }

    /// What could not be started, and why.
    public var description: String {
        "\(program) cannot be started: this platform starts no programs (a test that needs one is enabled only if Programs.canStart)"
    }
}
