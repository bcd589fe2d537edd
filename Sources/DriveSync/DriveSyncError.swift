import Transport

/// Why a sync could not run at all. Failures of single files do not throw: they are in
/// ``SyncReport/failures`` and ``SyncPlan/skipped``, and the rest of the folder is synced.
///
/// Match on ``kind``; show ``description`` (it names files, never secrets).
public struct DriveSyncError: Error, Sendable, CustomStringConvertible {
    /// What went wrong (a struct with static members: end a `switch` over it with `default:`).
    public typealias Kind = ErrorKind<DriveSyncError>

    /// What went wrong.
    public var kind: Kind
    /// A readable explanation.
    public var message: String
    /// The error that caused this one (a `StationClientError` for `.station` and `.offline`), if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// `"<kind>: <message>"`.
    public var description: String { "\(kind): \(message)" }
}

extension ErrorKind where Failure == DriveSyncError {
    /// The folder is missing, not a directory, or cannot be read.
    public static var folder: Self { Self() }
    /// The plan deletes more files than the limit allows. No longer thrown by
    /// ``DriveSync/run(_:progress:)``, which now holds the deletions back and does the rest
    /// (``SyncReport/heldDeletions``); kept so that code matching it still compiles.
    public static var tooManyDeletions: Self { Self() }
    /// The sync state could not be read or written in the cache store.
    public static var state: Self { Self() }
    /// The station answered, but not as a sync can go on with: listing the namespace was refused
    /// or got a bad answer, or during the run an answer was too slow or the run made no progress
    /// for ``SyncOptions/progressTimeout`` (the run stopped at the first one; what was done is
    /// recorded, and the next sync resumes). A station that cannot be reached
    /// at all is ``offline``.
    public static var station: Self { Self() }
    /// The station cannot be reached: no connection, the network gone, or a tunnel or gateway in
    /// front of it answering that it is not there (the `StationClientError` in
    /// ``DriveSyncError/underlying`` has kind `.unreachable`). Thrown by ``DriveSync/plan()`` when
    /// only the offline listing could be read (``DriveSync/planLocalChanges()`` then shows what
    /// waits in the folder), and by a run that lost the station midway (it stopped at the first
    /// such answer; what was done is recorded, and the next sync resumes). Before this kind,
    /// these were `.station`.
    public static var offline: Self { Self() }
    /// The sync was cancelled; what was done is recorded, and the next sync resumes.
    public static var cancelled: Self { Self() }
    /// Another sync of this folder is running (in this process or another): nothing was changed.
    /// Sync again once it ends, or wait for it with ``SyncOptions/waitsForOtherSyncs``.
    public static var busy: Self { Self() }
    /// The plan given to ``DriveSync/run(_:progress:)`` was made from a sync state that another
    /// sync has changed since, or is a local-only plan (``DriveSync/planLocalChanges()``), which
    /// never runs: nothing was changed; plan again.
    public static var planOutdated: Self { Self() }
    /// A ``RemoteRoot`` path that is not a folder of the namespace written from the top and
    /// normalized (`/Work/`): nothing was changed.
    public static var invalidRoot: Self { Self() }
    /// The client's cache store does not survive a relaunch (an `InMemoryCacheStore`, the
    /// default for a key store other than `FileKeyStore`, or an `EncryptedFileCacheStore` whose
    /// cache key is in an `InMemoryKeyStore`): the sync state would be lost with the process,
    /// and the next launch would download and compare every file again. Nothing was changed.
    /// Give the client a persistent store (`EncryptedFileCacheStore(directory:keyStore:)`), or
    /// set ``SyncOptions/allowsNonPersistentState`` (tests, one-shot sessions).
    public static var cacheStoreNotPersistent: Self { Self() }
    /// The work folder (``SyncOptions/workFolder``) cannot be used: missing on the way, a
    /// symbolic link, not a directory, on another file system than the folder (a download is
    /// renamed from it into the folder), the folder itself, or a folder the synced folder lies
    /// in. Nothing was changed.
    public static var workFolder: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] {
        [.folder, .tooManyDeletions, .state, .station, .cancelled, .busy, .planOutdated, .invalidRoot, .cacheStoreNotPersistent, .workFolder,
         .offline]
    }
}
