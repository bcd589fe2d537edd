/// What went wrong in an error of type `Failure`, without the details.
///
/// A struct with static members (one extension per error type declares them) rather than an enum,
/// so a kind added in a later release does not break an app's `switch`: match with `case .x:` and
/// end the `switch` with `default:`. Kinds compare equal when they have the same name.
public struct ErrorKind<Failure>: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name, as written after the dot (`"oddLength"`).
    public let description: String

    /// The kind named after the static member that makes it (`static var x: Self { Self() }`).
    package init(_ name: String = #function) { description = name }
}
