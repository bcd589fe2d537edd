import Foundation
import Manifest

extension StationClient {
    /// The namespace name a call uses for `namespace` (the configured one when `nil`): trimmed of
    /// surrounding whitespace as the station trims its `client` field on write, so every read,
    /// write, reshare and delete of `" notes "` uses `notes`.
    ///
    /// A name that is blank, or holds a control character (a line break, a tab, NUL), is refused:
    /// the station would silently file a blank one under `default`.
    ///
    /// - Parameter namespace: the name as the app gives it.
    /// - Returns: the normalized name.
    /// - Throws: ``StationClientError`` `StationClientError.Kind.invalidNamespace` for a name
    ///   that is blank or holds a control character.
    public static func normalizedNamespace(_ namespace: String) throws(StationClientError) -> String {
        let trimmed = Manifest.namespaceName(for: namespace)
        let operation = "checking namespace \(String(reflecting: namespace))"
        guard !namespace.unicodeScalars.allSatisfy({ $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            throw StationClientError(.invalidNamespace, operation: operation, message: "a namespace must not be blank")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw StationClientError(.invalidNamespace, operation: operation,
                                     message: "a namespace must not contain control characters")
        }
        return trimmed
    }

    /// The normalized namespace of a call: `namespace`, or the configured one when `nil`.
    nonisolated func namespace(_ namespace: String?) throws(StationClientError) -> String {
        try Self.normalizedNamespace(namespace ?? configuration.namespace)
    }
}
