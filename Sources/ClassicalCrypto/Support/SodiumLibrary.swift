#if canImport(CSodium)
import CSodium

/// Initialises libsodium exactly once, before the first call into it.
///
/// `sodium_init` picks the fastest implementations for this CPU and opens the system's random
/// source. A `static let` runs its initialiser once, thread-safely, so there is no global mutable
/// state here.
enum SodiumLibrary {
    private static let initialized: Bool = sodium_init() >= 0

    /// Makes sure `sodium_init` has run. It fails only when the system has no random source; the
    /// process cannot do any cryptography then, so that is a fatal environment error, not bad input.
    @inline(__always)
    static func ensureInitialized() {
        guard initialized else { fatalError("libsodium could not be initialised (no system random source)") }
    }
}
#endif
