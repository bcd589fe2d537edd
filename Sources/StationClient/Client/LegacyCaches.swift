import Foundation

// The caches earlier versions kept in the key store, and in the cache store without naming the
// station: they now live in the cache store under the station's uid.
extension StationClient {
    /// Removes the old cache items (once per client; failures only logged).
    func removeLegacyCaches() async {
        guard !legacyCachesRemoved else { return }
        legacyCachesRemoved = true
        let namespace = try? Self.normalizedNamespace(configuration.namespace)
        for name in Self.legacyKeyStoreItems(namespace: namespace) {
            do {
                try await configuration.keyStore.delete(name)
            } catch {
                configuration.log(.warning, "cannot remove the old cache item \(name) from the key store: \(error)")
            }
        }
        // The cache-store items may be another station's (a device paired again), so they are
        // never read, only removed.
        if let error = await removeLegacyCacheItems(namespace: namespace) { configuration.log(.warning, "cannot remove an old cache item: \(error)") }
    }

    /// Removes every old cache item of `namespace`, throwing the first failure (``forget()``).
    func forgetLegacyCaches(namespace: String) async throws {
        if let error = await removeLegacyCacheItems(namespace: namespace) { throw error }
        for name in Self.legacyKeyStoreItems(namespace: namespace) { try await configuration.keyStore.delete(name) }
    }

    private static func legacyKeyStoreItems(namespace: String?) -> [String] {
        [KeyStoreItem.legacyPostKeys] + (namespace.map { [KeyStoreItem.legacyOfflineListing(namespace: $0)] } ?? [])
    }

    /// Removes the cache-store items earlier versions named without the station (the offline
    /// listing of the namespace, the post-key journal), those that exist; the first error.
    private func removeLegacyCacheItems(namespace: String?) async -> (any Error)? {
        let store = configuration.cacheStore
        var names = CacheItem.legacyPostKeyItems
        if let namespace { names.append(CacheItem.legacyOfflineListing(namespace: namespace)) }
        for name in names where (try? await store.load(name)) != nil {
            do {
                try await store.delete(name)
            } catch {
                return error
            }
        }
        return nil
    }
}
