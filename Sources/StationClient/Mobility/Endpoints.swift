import Foundation

/// When two endpoint URLs name the same station or the same TLS server.
package enum Endpoints {
    /// Whether `a` and `b` reach the same TLS server: scheme and host case-insensitively, and the
    /// same port (or the scheme's default).
    package static func sameServer(_ a: URL, _ b: URL) -> Bool {
        server(a) == server(b)
    }

    /// Whether `a` and `b` name the same station: the same server and the same path without a
    /// trailing slash.
    package static func sameEndpoint(_ a: URL, _ b: URL) -> Bool {
        func path(_ url: URL) -> String {
            var path = url.path
            while path.hasSuffix("/") { path.removeLast() }
            return path
        }
        return sameServer(a, b) && path(a) == path(b)
    }

    private static func server(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
