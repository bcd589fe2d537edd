import Signing

/// What the station knows about a device when a request names it.
enum DeviceAuthorization: Sendable, Equatable {
    /// No device with that uid and device uid is Allowed (unknown, pending or removed).
    case notAuthorized
    /// The device is Allowed; its ML-DSA public key as stored (hex), or `nil`/empty if it has none.
    case authorized(mldsaPublicKeyHex: String?)
}

/// Looks up devices for ``RequestVerifier``: the station's followers table, or an emulator's.
protocol SigningDeviceDirectory: Sendable {
    /// The authorization of `deviceUID` under `uid` (compare both exactly: they are case-sensitive).
    func authorization(uid: String, deviceUID: String) async -> DeviceAuthorization
}

/// Remembers the nonces of verified requests for ``RequestVerifier``.
protocol NonceStore: Sendable {
    /// Whether `nonce` was recorded for this uid and device.
    func contains(uid: String, deviceUID: String, nonce: String) async -> Bool
    /// Records `nonce` (with the request's timestamp, for expiry); returns false when it was
    /// already recorded, so two concurrent requests with one nonce cannot both pass.
    func insert(uid: String, deviceUID: String, nonce: String, timestamp: Int64) async -> Bool
}

/// A ``SigningDeviceDirectory`` backed by a closure.
struct DeviceDirectory: SigningDeviceDirectory {
    private let lookUp: @Sendable (_ uid: String, _ deviceUID: String) async -> DeviceAuthorization

    /// Creates a directory that asks `lookUp`.
    init(_ lookUp: @escaping @Sendable (_ uid: String, _ deviceUID: String) async -> DeviceAuthorization) {
        self.lookUp = lookUp
    }

    /// Asks the closure.
    func authorization(uid: String, deviceUID: String) async -> DeviceAuthorization {
        await lookUp(uid, deviceUID)
    }
}

/// A ``NonceStore`` in memory that keeps nonces as the station does: for 24 hours after their
/// request's timestamp, pruned at most once an hour.
actor InMemoryNonceStore: NonceStore {
    private struct Key: Hashable {
        let uid: String
        let deviceUID: String
        let nonce: String
    }

    private var timestamps: [Key: Int64] = [:]
    private var lastPrune: Int64 = .min
    private let retention: Int64
    private let clock: @Sendable () -> Int64

    /// Creates an empty store.
    ///
    /// - Parameters:
    ///   - retention: how long a nonce is kept after its request's timestamp (24 h on a station).
    ///   - clock: Unix time in seconds, for pruning.
    init(retention: Int64 = 24 * 60 * 60, clock: @escaping @Sendable () -> Int64 = RequestSigner.systemClock) {
        self.retention = retention
        self.clock = clock
    }

    /// Whether `nonce` is held for this uid and device.
    func contains(uid: String, deviceUID: String, nonce: String) -> Bool {
        timestamps[Key(uid: uid, deviceUID: deviceUID, nonce: nonce)] != nil
    }

    /// Records `nonce`, first dropping nonces past their retention if the last pruning was over an
    /// hour ago; returns false when it was already held.
    func insert(uid: String, deviceUID: String, nonce: String, timestamp: Int64) -> Bool {
        pruneIfDue()
        return timestamps.updateValue(timestamp, forKey: Key(uid: uid, deviceUID: deviceUID, nonce: nonce)) == nil
    }

    /// The number of nonces held.
    var count: Int { timestamps.count }

    private func pruneIfDue() {
        let now = clock()
        guard lastPrune == .min || now - lastPrune > 60 * 60 else { return }
        lastPrune = now
        let cutoff = now - retention
        timestamps = timestamps.filter { $0.value >= cutoff }
    }
}
