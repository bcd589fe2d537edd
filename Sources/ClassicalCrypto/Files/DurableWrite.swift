#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a flush before a rename (or after one, of the directory) must guarantee, chosen by what
/// losing the write to a power cut would cost.
///
/// Every caller says which it needs, and why, where it flushes:
/// - ``ordering`` for what can be rebuilt or fetched again: caches (post keys, the offline
///   listing), DriveSync's sync state and journal, downloads, sealed and opened files, a session's
///   copy of an unlocked key. A power cut may take the last writes, but never leaves a later write
///   on disk without an earlier one, nor a renamed file without its bytes: the journal written
///   before an action is on disk before anything the action writes, and the next run resolves an
///   action whose record was lost from the folder and the listing.
/// - ``powerLoss`` for what cannot be rebuilt once the user has been told it is saved: the key
///   store (credentials, identities; losing them after "paired" strands the device, whose old keys
///   stay registered on the station), and the settings and followed stations the `cipher` command
///   line keeps beside it.
package enum DurabilityNeed: Sendable, Equatable, CaseIterable {
    /// The flushed writes reach the disk before any write issued after the flush (on Darwin a
    /// barrier, `F_BARRIERFSYNC`); a power cut may still lose them.
    case ordering
    /// The flushed writes survive a power cut once the flush returns (on Darwin the drive is asked
    /// to write its cache out, `F_FULLFSYNC`, many times slower than a plain `fsync`).
    case powerLoss
}

/// How the package makes a written file durable before it is renamed (or linked) into
/// place: every write-then-rename (key store, caches, sealed files, downloads) flushes through it,
/// with the ``DurabilityNeed`` its caller has.
///
/// On Darwin `fsync` only hands the data to the drive, which may keep it in its cache, out of
/// order, across a power cut. `fcntl(F_BARRIERFSYNC)` adds a barrier (what was written before it
/// reaches the disk before what is written after: ``DurabilityNeed/ordering``), and
/// `fcntl(F_FULLFSYNC)` asks the drive to write its cache out (``DurabilityNeed/powerLoss``), at a
/// cost a small write pays many times over. Where a file system supports neither (some network and
/// FUSE file systems), `fsync` is the fallback. Elsewhere (Linux) `fsync` serves both, as before:
/// the file systems there flush the drive's cache with it, and there is no barrier-only flush.
package enum DurableWrite {
    /// Darwin's flush commands of `fcntl(2)`, by their numbers in `<sys/fcntl.h>`. They are numbers
    /// here so that the choice is tested by value on every platform; the tests compare them with
    /// the Darwin module's `F_BARRIERFSYNC` and `F_FULLFSYNC` where that module builds.
    package enum DarwinFlushCommand: Int32, Sendable {
        /// `F_BARRIERFSYNC` (85): `fsync`, then a barrier to the drive.
        case barrierFsync = 85
        /// `F_FULLFSYNC` (51): `fsync`, then the drive writes its cache out to the medium.
        case fullFsync = 51
    }

    /// The Darwin command that gives `need`.
    package static func darwinCommand(for need: DurabilityNeed) -> DarwinFlushCommand {
        switch need {
        case .ordering: .barrierFsync
        case .powerLoss: .fullFsync
        }
    }

    /// The platform's own flush, tried before `fsync`: `fcntl` with the command on Darwin; `nil`
    /// where `fsync` is the only flush.
    package static let platformFlush: (@Sendable (Int32, DarwinFlushCommand) -> Int32)? = {
        #if canImport(Darwin)
        return { descriptor, command in fcntl(descriptor, command.rawValue) }
        #else
        return nil
        #endif
    }()

    /// Flushes `descriptor`'s data (a file's, or a directory's entries) as far as `need` asks.
    ///
    /// - Parameters:
    ///   - need: what the flush must guarantee (see ``DurabilityNeed``).
    ///   - platform: the platform's own flush, tried first with the command for `need` (tests pass
    ///     one that records or fails);
    ///   - fsync: the fallback, and the flush where there is no platform one.
    /// - Returns: 0 on success, -1 with `errno` set otherwise (as `fsync(2)`).
    package static func flush(_ descriptor: Int32, need: DurabilityNeed,
                              platform: ((Int32, DarwinFlushCommand) -> Int32)? = platformFlush,
                              fsync: (Int32) -> Int32 = { systemFsync($0) }) -> Int32 {
        if let platform, platform(descriptor, darwinCommand(for: need)) != -1 { return 0 }
        return fsync(descriptor)
    }

    /// Puts a flushed file in place: renames `temporary` onto `destination` (replacing what is there
    /// in one step), then flushes the directory's entries as far as `need` asks, so that after a
    /// crash the destination holds the new file or the old one, never a part of either.
    ///
    /// - Parameter need: what the directory's flush must guarantee; ``DurabilityNeed/powerLoss``,
    ///   the stronger, for a caller that does not say.
    /// - Returns: 0 on success, -1 with `errno` set when the rename failed (as `rename(2)`).
    package static func rename(_ temporary: String, onto destination: String, need: DurabilityNeed = .powerLoss) -> Int32 {
        guard systemRename(temporary, destination) == 0 else { return -1 }
        let slash = destination.lastIndex(of: "/")
        flushDirectory(slash.map { $0 == destination.startIndex ? "/" : String(destination[..<$0]) } ?? ".", need: need)
        return 0
    }

    /// Flushes a directory's entries so that a rename or link in it is kept as `need` asks (best effort).
    package static func flushDirectory(_ path: String, need: DurabilityNeed) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = flush(descriptor, need: need)
        _ = close(descriptor)
    }
}

/// `fsync(2)`, under a name that `DurableWrite.flush`'s parameter does not shadow.
private func systemFsync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }

/// `rename(2)`, under a name that `DurableWrite.rename` does not shadow.
private func systemRename(_ old: String, _ new: String) -> Int32 { rename(old, new) }
