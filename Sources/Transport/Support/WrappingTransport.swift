import Foundation

/// A transport of the package's own (the client's `Range` adder, a test's or a benchmark's
/// decorator) that changes some exchanges and hands the rest, and every key reading, to `base`:
/// the place where such wrappers forward `presentedPublicKey(at:)`, so none can drop it.
package protocol WrappingTransport: HTTPTransport {
    /// The transport this one hands exchanges and key readings to.
    var base: any HTTPTransport { get }
}

extension WrappingTransport {
    /// The key `base` reads at `url`.
    ///
    /// - Throws: as `base` does.
    package func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        try await base.presentedPublicKey(at: url)
    }
}
