import Foundation
import Manifest
import StationClient
import Transport

/// The non-secret settings kept next to the key store (`cipher.json`).
struct CLISettings: Codable, Sendable {
    /// The IPFS gateway for fallback reads and IPNS, if one was given at pairing.
    var gateway: String?
    /// The device name given at pairing.
    var deviceName: String?

    enum CodingKeys: String, CodingKey {
        case gateway
        case deviceName = "device_name"
    }
}

/// `following.json`: the stations followed, each with its pinned TLS key (no secret).
struct FollowingFile: Codable, Sendable {
    var version = 1
    var following: [FollowedStationHandle]
}

/// The tool's home directory: settings, the followed stations and the `FileKeyStore` holding credentials.
struct Home: Sendable {
    let directory: URL

    /// `--home`, else `CIPHER_HOME`, else the platform config directory (`~/.config/cipher` on
    /// Linux or `$XDG_CONFIG_HOME/cipher`; `~/Library/Application Support/cipher` on macOS).
    static func resolve(_ arguments: ParsedArguments, environment: [String: String]) -> Home {
        if let path = arguments.value("--home") ?? environment["CIPHER_HOME"], !path.isEmpty {
            return Home(directory: URL(fileURLWithPath: path, isDirectory: true))
        }
        // `homeDirectoryForCurrentUser` is macOS's and Linux's only; the package's scheme builds
        // this executable for Apple's other systems too, where the app's home stands in.
        #if os(macOS) || os(Linux)
        let homeDirectory = FileManager.default.homeDirectoryForCurrentUser
        #else
        let homeDirectory = URL(fileURLWithPath: NSHomeDirectory(), isDirectory: true)
        #endif
        #if os(macOS)
        let base = homeDirectory.appendingPathComponent("Library/Application Support", isDirectory: true)
        #else
        let base = environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? homeDirectory.appendingPathComponent(".config", isDirectory: true)
        #endif
        return Home(directory: base.appendingPathComponent("cipher", isDirectory: true))
    }

    var settingsURL: URL { directory.appendingPathComponent("cipher.json") }

    func loadSettings() throws(CLIError) -> CLISettings {
        try load(CLISettings.self, from: settingsURL) ?? CLISettings()
    }

    func saveSettings(_ settings: CLISettings) throws(CLIError) {
        try save(settings, to: settingsURL)
    }

    /// The JSON file at `url` read as `Value`, or `nil` when there is none.
    private func load<Value: Decodable>(_ type: Value.Type, from url: URL) throws(CLIError) -> Value? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw .failure("\(url.path) is damaged: \(error)")
        }
    }

    /// Writes `value` as JSON to `url` as the key store writes its items (`AtomicFile`: a
    /// temporary file flushed, then renamed over the old one and the directory flushed), making
    /// the home (owner only) first.
    ///
    /// Power loss, as the key store: the settings of a pairing and the keys followed stations were
    /// trusted by are written when the command says it paired or followed, and cannot be rebuilt.
    private func save(_ value: some Encodable, to url: URL) throws(CLIError) {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try AtomicFile.replace(url, with: [UInt8](try encoder.encode(value)), need: .powerLoss,
                                   operation: "saving \(url.lastPathComponent)")
        } catch {
            throw .failure("cannot write \(url.path): \(error)")
        }
    }

    /// The stations `cipher follow` followed, with the TLS key each was trusted by (`following.json`).
    var followingURL: URL { directory.appendingPathComponent("following.json") }

    /// The followed stations kept by `cipher follow` (none when the file does not exist).
    func loadFollowing() throws(CLIError) -> [FollowedStationHandle] {
        try load(FollowingFile.self, from: followingURL)?.following ?? []
    }

    /// The kept handle of the station at `url`, if `cipher follow` followed it.
    func followedStation(at url: URL) throws(CLIError) -> FollowedStationHandle? {
        try loadFollowing().first { Self.sameEndpoint($0.endpoint, url) }
    }

    /// Keeps `handle`, replacing a handle kept for the same endpoint or station uid (written
    /// atomically: a temporary file renamed over the old one).
    func keepFollowed(_ handle: FollowedStationHandle) throws(CLIError) {
        var kept = try loadFollowing().filter { !Self.sameEndpoint($0.endpoint, handle.endpoint) && $0.uid != handle.uid }
        kept.append(handle)
        try saveFollowing(kept)
    }

    /// Forgets the kept handles of the station `uid`.
    func forgetFollowed(uid: String) throws(CLIError) {
        let kept = try loadFollowing()
        let remaining = kept.filter { $0.uid != uid }
        if remaining.count != kept.count { try saveFollowing(remaining) }
    }

    private func saveFollowing(_ handles: [FollowedStationHandle]) throws(CLIError) {
        try save(FollowingFile(following: handles), to: followingURL)
    }

    /// Whether two endpoint URLs name the same station: scheme and host case-insensitively, the
    /// same port (or default), and the same path without a trailing slash.
    static func sameEndpoint(_ a: URL, _ b: URL) -> Bool { Endpoints.sameEndpoint(a, b) }

    /// The session's kept key for this home's key store (see ``SessionKeyring``).
    ///
    /// - Throws: `CLIError.usage` when `CIPHER_KEEP_UNLOCKED` is not a lifetime.
    func sessionKeyring(environment: [String: String]) throws(CLIError) -> SessionKeyring {
        SessionKeyring(storeDirectory: directory, lifetime: try SessionKeyring.lifetime(from: environment))
    }

    /// Opens the key store with the key kept for this session, else with the passphrase from
    /// `CIPHER_PASSPHRASE` or a terminal prompt (and then keeps the unlocked key for the session,
    /// when this login has a session keyring of its own; else says once that it does not).
    /// `CIPHER_KEEP_UNLOCKED=0` (or `off`) forgets a key kept earlier.
    func openKeyStore(console: Console, environment: [String: String], creating: Bool = false) throws(CLIError) -> FileKeyStore {
        let session = try sessionKeyring(environment: environment)
        session.removeExpiredCopies()
        let availability = SessionKeyring.availability
        if session.lifetime == 0 || availability != .own {
            // Nothing is kept: forget what an earlier command (or version) kept in this keyring.
            session.forget()
        } else if let kept = session.keptKey() {
            if let store = try? FileKeyStore(directory: directory, unlockedKey: kept) { return store }
            // Stale (the store was re-created or replaced): forget it and ask as without one.
            session.forget()
        }
        let store = try openKeyStoreWithPassphrase(console: console, environment: environment, creating: creating)
        guard session.lifetime > 0 else { return store }
        switch availability {
        case .own:
            session.keep(store.unlockedKey)
        case .sharedUserDefault(let name):
            console.note("""
                cipher: the unlocked key is not kept: this login has no session keyring of its own (\(name) is the user's \
                default keyring, which every process of the user can read), so every command asks for the passphrase. \
                A login through pam_keyinit, or `keyctl session`, gives one; \(SessionKeyring.lifetimeVariable)=0 silences this.
                """)
        case .unavailable:
            break
        }
        return store
    }

    private func openKeyStoreWithPassphrase(console: Console, environment: [String: String], creating: Bool) throws(CLIError) -> FileKeyStore {
        let passphrase: String
        if let fromEnvironment = environment["CIPHER_PASSPHRASE"], !fromEnvironment.isEmpty {
            passphrase = fromEnvironment
        } else if console.stdinIsTerminal {
            let prompt: TerminalText = creating ? "Choose a passphrase for \(directory.path): " : "Passphrase for \(directory.path): "
            guard let typed = console.ask(prompt, secret: true), !typed.isEmpty else { throw .usage("no passphrase given") }
            passphrase = typed
        } else {
            throw .usage("set CIPHER_PASSPHRASE (standard input is not a terminal, so no passphrase prompt)")
        }
        do {
            return try FileKeyStore(directory: directory, passphrase: passphrase)
        } catch {
            throw .from(error)
        }
    }

    /// The client configuration for the `drive` namespace (or `namespace`), with the platform's
    /// default transport (libcurl on Linux).
    func configuration(keyStore: any KeyStore, namespace: String = DriveFiles.namespace) throws(CLIError) -> StationClientConfiguration {
        configuration(keyStore: keyStore, settings: try loadSettings(), namespace: namespace)
    }

    /// The same, with `settings` instead of those in `cipher.json` (a pairing not yet saved).
    func configuration(keyStore: any KeyStore, settings: CLISettings, namespace: String = DriveFiles.namespace) -> StationClientConfiguration {
        let transport = StationClientConfiguration.defaultTransport()
        let gateway = settings.gateway.flatMap(URL.init(string:)).map { IPFSGateway(baseURL: $0, transport: transport) }
        return StationClientConfiguration(namespace: namespace, keyStore: keyStore, transport: transport, gateway: gateway,
                                          persistsPostKeys: true)
    }
}
