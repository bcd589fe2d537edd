import Foundation

/// Response bodies reach the caller exactly as the server sent them, never decoded: a station's
/// bytes are hashed and checked against CIDs, and a compressed answer would let a server send a
/// few kilobytes that decode to the whole memory or disk limit. Every transport asks for
/// `Accept-Encoding: identity` and refuses, when the head arrives, any answer whose
/// `Content-Encoding` says otherwise.
package enum ContentEncoding {
    /// The error for a response head that names a `Content-Encoding` other than `identity`, or
    /// `nil` for a head without one (or with `identity`).
    package static func refusal(of headers: HTTPHeaders, method: HTTPMethod, url: URL) -> TransportError? {
        let codings = headers.values(for: "Content-Encoding")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard let other = codings.first(where: { $0.lowercased() != "identity" }) else { return nil }
        return TransportError(.unsupportedContentEncoding, method: method, url: url,
                              message: "the response is encoded (\(other)); bodies are taken only as sent, never decoded")
    }
}
