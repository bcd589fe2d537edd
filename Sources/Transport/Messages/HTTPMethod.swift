/// An HTTP request method, such as `GET` or `POST`.
///
/// Methods are case-sensitive tokens (RFC 9110 §9.1); the static members cover the methods a Cipher
/// Station client uses, and `init(_:)` accepts any other token.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as sent on the wire, for example `"GET"`.
    public let rawValue: String

    /// Creates a method from its token, for example `HTTPMethod("PROPFIND")`.
    public init(_ token: String) { rawValue = token }

    /// Creates a method from its token; same as `init(_:)`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `GET`: read a resource.
    public static let get = HTTPMethod("GET")
    /// `HEAD`: read a resource's headers without its body.
    public static let head = HTTPMethod("HEAD")
    /// `POST`: submit a body to a resource.
    public static let post = HTTPMethod("POST")
    /// `PUT`: replace a resource with the body.
    public static let put = HTTPMethod("PUT")
    /// `PATCH`: modify a resource.
    public static let patch = HTTPMethod("PATCH")
    /// `DELETE`: remove a resource.
    public static let delete = HTTPMethod("DELETE")
    /// `OPTIONS`: ask for a resource's communication options.
    public static let options = HTTPMethod("OPTIONS")

    /// The method token.
    public var description: String { rawValue }
}
