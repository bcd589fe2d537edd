import Foundation
import StationClient

/// Device credentials set aside, not lost: `cipher pair --replace` keeps the credentials it
/// replaces as a backup item in the same key store (sealed like every item), and
/// `cipher restore-credentials` brings one back, setting the current ones aside in turn.
enum CredentialBackups {
    /// The key-store item names of backups start with this; a UTC time stamp follows.
    static let prefix = KeyStoreItem.credentials + ".backup-"

    /// A backup made, with the credentials it holds.
    struct Backup {
        var name: String
        var deviceUID: String
        var stationUID: String
        var endpoint: String
    }

    /// Before pairing: when `store` holds credentials, refuses unless `replacing`, and then keeps
    /// them as a backup.
    ///
    /// - Returns: the backup made, or `nil` when the home was not paired.
    /// - Throws: `CLIError.failure` naming the paired station and device when not `replacing`.
    /// `settings` (the gateway and device name of the current pairing) are kept with the backup
    /// and come back with it.
    static func setAside(in store: FileKeyStore, replacing: Bool, settings: CLISettings, console: Console) async throws -> Backup? {
        guard try await store.loadSecret(KeyStoreItem.credentials) != nil else { return nil }
        let described = try await describe(KeyStoreItem.credentials, in: store)
        guard replacing else {
            var message = "this home is already paired"
            if let described {
                message += ": device \(described.deviceUID) with station \(described.stationUID) at \(described.endpoint)"
            }
            throw CLIError.failure(message + ". Pairing again replaces these credentials (the device stays registered on the station); "
                + "add --replace to pair anyway and keep them as a backup")
        }
        let name = try await keepCopy(of: KeyStoreItem.credentials, in: store)
        do {
            try await saveSettings(settings, for: name, in: store)
        } catch {
            await discard(name, in: store)
            throw error
        }
        return Backup(name: name, deviceUID: described?.deviceUID ?? "?", stationUID: described?.stationUID ?? "?",
                      endpoint: described?.endpoint ?? "?")
    }

    /// Copies the item `item` of `store` to a fresh backup name.
    ///
    /// - Returns: the backup's item name.
    static func keepCopy(of item: String, in store: FileKeyStore) async throws -> String {
        guard let secret = try await store.loadSecret(item) else { throw CLIError.failure("nothing stored under \(item)") }
        let stamp = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC") ?? .current,
                                                formatOptions: [.withYear, .withMonth, .withDay, .withTime, .withFractionalSeconds])
        var name = prefix + stamp.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: ".", with: "-")
        var suffix = 1
        while FileManager.default.fileExists(atPath: try store.fileURL(for: name).path) {
            suffix += 1
            name = prefix + stamp.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: ".", with: "-") + "-\(suffix)"
        }
        try await store.saveSecret(secret, as: name)
        return name
    }

    /// The item holding the settings kept with the backup `name` (its name does not start with
    /// ``prefix``, so it is never listed as a backup).
    static func settingsItem(for name: String) -> String { "settings-of-" + name }

    /// Keeps `settings` with the backup `name`, sealed in the key store like the backup.
    static func saveSettings(_ settings: CLISettings, for name: String, in store: FileKeyStore) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try await store.save(Array(try encoder.encode(settings)), as: settingsItem(for: name))
    }

    /// The settings kept with the backup `name`, or `nil` when it has none (a backup made by an
    /// earlier version) or they do not read.
    static func settings(for name: String, in store: FileKeyStore) async throws -> CLISettings? {
        guard let bytes = try await store.load(settingsItem(for: name)) else { return nil }
        return try? JSONDecoder().decode(CLISettings.self, from: Data(bytes))
    }

    /// Removes the backup `name` and its settings (best effort: a pairing that failed undoes its backup).
    static func discard(_ name: String, in store: FileKeyStore) async {
        try? await store.delete(settingsItem(for: name))
        try? await store.delete(name)
    }

    /// The backup item names in `store`, oldest first.
    static func names(in store: FileKeyStore) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: store.directory.path)) ?? []
        return files.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".csks") }.map { String($0.dropLast(".csks".count)) }.sorted()
    }

    /// The device, station and endpoint the credentials stored under `item` name, or `nil` when
    /// there are none or they do not read.
    static func describe(_ item: String, in store: FileKeyStore) async throws -> Backup? {
        guard let secret = try await store.loadSecret(item), let credentials = try? DeviceCredentials(encoded: secret) else { return nil }
        return Backup(name: "", deviceUID: credentials.deviceUID, stationUID: credentials.stationUID,
                      endpoint: credentials.endpoint.absoluteString)
    }
}
