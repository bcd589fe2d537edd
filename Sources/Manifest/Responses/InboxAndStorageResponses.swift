import OrderedJSON

/// `POST /inbox`: always `{"status":"ok","result":{…}}`, HTTP 200 even when `result` is an error.
///
/// Results seen: `follow_request_pending_multi_device` with `rewrap_triggered`, `devices_added`,
/// `pending_approval`; legacy `follow_request_pending`; `follow_request_already_registered` with
/// `uid`; and `{"error": "…"}` for validation failures.
public struct InboxResponse: Sendable, Hashable, Decodable {
    /// The result object.
    public struct Result: Sendable, Hashable, Decodable {
        /// The outcome, e.g. `follow_request_pending_multi_device`; `nil` for an error.
        public var status: String?
        /// The follower uid (`follow_request_already_registered`).
        public var uid: String?
        /// The failure text, when the message was rejected.
        public var error: String?
        /// Whether the station re-sealed posts (only with its dev auto-accept).
        public var rewrapTriggered: Bool?
        /// Devices newly registered.
        public var devicesAdded: Int?
        /// Devices now waiting for the owner's approval.
        public var pendingApproval: Int?
        /// The rewrap summary, when a rewrap ran.
        public var rewrap: RewrapManifestSummary?

        /// Creates a result.
        public init(
            status: String? = nil, uid: String? = nil, error: String? = nil, rewrapTriggered: Bool? = nil,
            devicesAdded: Int? = nil, pendingApproval: Int? = nil, rewrap: RewrapManifestSummary? = nil
        ) {
            self.status = status
            self.uid = uid
            self.error = error
            self.rewrapTriggered = rewrapTriggered
            self.devicesAdded = devicesAdded
            self.pendingApproval = pendingApproval
            self.rewrap = rewrap
        }

        private enum CodingKeys: String, CodingKey {
            case status, uid, error, rewrapTriggered = "rewrap_triggered", devicesAdded = "devices_added"
            case pendingApproval = "pending_approval", rewrap
        }

        /// Reads a result; every field is optional.
        ///
        /// - Throws: `DecodingError.typeMismatch` when it is not an object.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = container.lenient(String.self, .status)
            uid = container.lenient(String.self, .uid)
            error = container.lenient(String.self, .error)
            rewrapTriggered = container.lenient(Bool.self, .rewrapTriggered)
            devicesAdded = container.lenient(Int.self, .devicesAdded)
            pendingApproval = container.lenient(Int.self, .pendingApproval)
            rewrap = container.lenient(RewrapManifestSummary.self, .rewrap)
        }
    }

    /// `ok` (even for errors).
    public var status: String
    /// The outcome.
    public var result: Result

    /// Creates a response.
    public init(status: String = "ok", result: Result) {
        self.status = status
        self.result = result
    }
}

/// A `/storage` section that is either its figures or `{"error": "…"}` (the station reports a
/// failed probe in place).
public enum StorageSection<Value: Decodable & Sendable & Hashable>: Sendable, Hashable, Decodable {
    /// The figures.
    case value(Value)
    /// The probe failed with this text.
    case error(String)

    private enum CodingKeys: String, CodingKey { case error }

    /// Reads the figures, or the `error` text when they do not read.
    ///
    /// - Throws: `DecodingError` when the section is neither.
    public init(from decoder: any Decoder) throws {
        do {
            self = .value(try Value(from: decoder))
        } catch {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let text = container.lenient(String.self, .error) else { throw error }
            self = .error(text)
        }
    }

    /// The figures, or `nil` when the probe failed.
    public var value: Value? {
        if case let .value(value) = self { return value }
        return nil
    }
}

/// `GET /storage` (no auth): IPFS repository, disk and per-namespace usage.
public struct StorageResponse: Sendable, Hashable, Decodable {
    /// The IPFS repository (`repo/stat`).
    public struct IPFSUsage: Sendable, Hashable, Decodable {
        /// Repository size.
        public var repoSizeBytes: Int
        /// Configured maximum.
        public var storageMaxBytes: Int
        /// Blocks stored.
        public var numObjects: Int
        /// Size / maximum, in percent.
        public var usedPercent: Double

        /// Creates the figures.
        public init(repoSizeBytes: Int, storageMaxBytes: Int, numObjects: Int, usedPercent: Double) {
            self.repoSizeBytes = repoSizeBytes
            self.storageMaxBytes = storageMaxBytes
            self.numObjects = numObjects
            self.usedPercent = usedPercent
        }

        private enum CodingKeys: String, CodingKey {
            case repoSizeBytes = "repo_size_bytes", storageMaxBytes = "storage_max_bytes"
            case numObjects = "num_objects", usedPercent = "used_percent"
        }
    }

    /// The disk the station's data lives on.
    public struct DeviceUsage: Sendable, Hashable, Decodable {
        /// Disk size.
        public var totalBytes: Int
        /// Used.
        public var usedBytes: Int
        /// Free.
        public var freeBytes: Int
        /// Used / size, in percent.
        public var usedPercent: Double

        /// Creates the figures.
        public init(totalBytes: Int, usedBytes: Int, freeBytes: Int, usedPercent: Double) {
            self.totalBytes = totalBytes
            self.usedBytes = usedBytes
            self.freeBytes = freeBytes
            self.usedPercent = usedPercent
        }

        private enum CodingKeys: String, CodingKey {
            case totalBytes = "total_bytes", usedBytes = "used_bytes", freeBytes = "free_bytes", usedPercent = "used_percent"
        }
    }

    /// One namespace's share (sizes are 0 when the node no longer supports `object/stat`).
    public struct ClientUsage: Sendable, Hashable, Decodable {
        /// Cumulative size of its posts and envelope sets.
        public var sizeBytes: Int
        /// Its posts.
        public var postCount: Int
        /// Its size / repository size, in percent.
        public var percentOfRepo: Double

        /// Creates the figures.
        public init(sizeBytes: Int, postCount: Int, percentOfRepo: Double) {
            self.sizeBytes = sizeBytes
            self.postCount = postCount
            self.percentOfRepo = percentOfRepo
        }

        private enum CodingKeys: String, CodingKey {
            case sizeBytes = "size_bytes", postCount = "post_count", percentOfRepo = "percent_of_repo"
        }
    }

    /// The IPFS repository, or the error of its probe.
    public var ipfs: StorageSection<IPFSUsage>?
    /// The disk, or the error of its probe.
    public var device: StorageSection<DeviceUsage>?
    /// Usage per namespace, or the error of the computation.
    public var clients: StorageSection<OrderedMap<ClientUsage>>?
    /// All namespaces' bytes (absent when `clients` failed).
    public var totalContentBytes: Int?

    /// Creates a response.
    public init(
        ipfs: StorageSection<IPFSUsage>?, device: StorageSection<DeviceUsage>?,
        clients: StorageSection<OrderedMap<ClientUsage>>?, totalContentBytes: Int?
    ) {
        self.ipfs = ipfs
        self.device = device
        self.clients = clients
        self.totalContentBytes = totalContentBytes
    }

    private enum CodingKeys: String, CodingKey {
        case ipfs, device, clients, totalContentBytes = "total_content_bytes"
    }
}

/// `POST /privacy/flip`: every post of a namespace migrated between public and encrypted.
public struct PrivacyFlipResponse: Sendable, Hashable, Decodable {
    /// One post's migration.
    public struct Migration: Sendable, Hashable, Decodable {
        /// The post before.
        public var oldCID: String?
        /// The post after (on success).
        public var newCID: String?
        /// `ok`, `skipped` or `error`.
        public var status: String
        /// Why it was skipped or failed.
        public var error: String?

        /// Creates a record.
        public init(oldCID: String?, newCID: String?, status: String, error: String?) {
            self.oldCID = oldCID
            self.newCID = newCID
            self.status = status
            self.error = error
        }

        private enum CodingKeys: String, CodingKey { case oldCID = "old_cid", newCID = "new_cid", status, error }
    }

    /// `privacy_flipped`.
    public var status: String
    /// `public` or `private`.
    public var accountPrivacy: String
    /// The namespace's new default audience.
    public var defaultAudienceMode: AudienceMode
    /// Per-post records.
    public var migrated: [Migration]
    /// Posts migrated successfully.
    public var migratedCount: Int
    /// The manifest CID afterwards.
    public var manifestCID: String?

    /// Creates a response.
    public init(
        status: String = "privacy_flipped", accountPrivacy: String, defaultAudienceMode: AudienceMode,
        migrated: [Migration], migratedCount: Int, manifestCID: String?
    ) {
        self.status = status
        self.accountPrivacy = accountPrivacy
        self.defaultAudienceMode = defaultAudienceMode
        self.migrated = migrated
        self.migratedCount = migratedCount
        self.manifestCID = manifestCID
    }

    private enum CodingKeys: String, CodingKey {
        case status, accountPrivacy = "account_privacy", defaultAudienceMode = "default_audience_mode"
        case migrated, migratedCount = "migrated_count", manifestCID = "manifest_cid"
    }
}
