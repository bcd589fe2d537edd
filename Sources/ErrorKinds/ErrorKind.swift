/// What went wrong in an error of type `Failure`, without the details.
///
/// A struct with static members (one extension per error type declares them) rather than an enum,
/// so a kind added in a later release does not break an app's `switch`: match with `case .x:` and
/// end the `switch` with `default:`. Kinds compare equal when they have the same name.
///
/// Every module's errors share this type: `PQCrypto` and `Transport` re-export it, so an app that
/// imports either (or both) writes `ErrorKind<PQCryptoError>` or `PQCryptoError.Kind`.
public struct ErrorKind<Failure>: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name, as written after the dot (`"oddLength"`).
    public let description: String

    /// The kind named after the static member that makes it (`static var x: Self { Self() }`).
    package init(_ name: String = #function) { description = name }
}

/// An error that carries an ``ErrorKind`` and the details of its kind.
///
/// The package's error structs conform, and take from it the pattern match that lets `catch` name
/// a value as it would an enum case.
public protocol KindedError: Error, Hashable, CustomStringConvertible {
    /// What went wrong, without the details: compare it or `switch` over it.
    var kind: ErrorKind<Self> { get }
}

extension KindedError {
    /// Matches a thrown error equal to `pattern`, so `catch SomeError.x` works as it did when the
    /// error was an enum.
    public static func ~= (pattern: Self, error: any Swift.Error) -> Bool { (error as? Self) == pattern }
}
