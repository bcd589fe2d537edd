/// A method and a path pattern that pick requests: to aim a fault at one route, or to count the
/// requests a route received in ``RequestLog``.
///
///     let confirm = RequestRoute("POST", path: "/delegate/confirm")      // exactly this path
///     let content = RequestRoute("GET", pathPrefix: "/content/")         // every /content/<cid>
///     let anything = RequestRoute.any
///
/// Paths are matched against the percent-decoded path without the query, as the station routes
/// them (``StationRequest/path``).
public struct RequestRoute: Sendable, Hashable, CustomStringConvertible {
    /// The method to match (upper case), or `nil` for every method.
    public let method: String?
    /// The path, or the path's start when ``matchesPrefix`` is set.
    public let path: String
    /// Whether ``path`` is a prefix (`/content/` matches `/content/Qm…`) rather than the whole path.
    public let matchesPrefix: Bool

    /// Requests to exactly `path`, with `method` (`nil`: any method).
    public init(_ method: String? = nil, path: String) {
        self.method = method?.uppercased()
        self.path = path
        matchesPrefix = false
    }

    /// Requests whose path starts with `pathPrefix`, with `method` (`nil`: any method).
    public init(_ method: String? = nil, pathPrefix: String) {
        self.method = method?.uppercased()
        path = pathPrefix
        matchesPrefix = true
    }

    /// Every request.
    public static let any = RequestRoute(pathPrefix: "")

    /// Whether a request with `method` and `path` is on this route.
    public func matches(method: String, path: String) -> Bool {
        if let wanted = self.method, wanted != method.uppercased() { return false }
        return matchesPrefix ? path.hasPrefix(self.path) : path == self.path
    }

    /// For example `POST /delegate/confirm` or `GET /content/*`.
    public var description: String {
        "\(method ?? "*") \(path)\(matchesPrefix ? "*" : "")"
    }
}
