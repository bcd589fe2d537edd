import ClassicalCrypto
import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small files (key-store items, cache items) put in place atomically: written to a temporary
/// file (mode 0600) beside the destination, flushed and closed, then renamed or linked into place,
/// and the directory flushed. On every failure the descriptor is closed and the temporary file
/// removed, and the destination is left as it was.
///
/// Each caller says what the flushes must guarantee (``DurabilityNeed``): `.powerLoss` for the key
/// store, whose items cannot be rebuilt (`F_FULLFSYNC` on Darwin); `.ordering` for caches and
/// sync state, which can (`F_BARRIERFSYNC`: a power cut may take the last write, never the bytes
/// without the name or a later write without an earlier one).
package enum AtomicFile {
    /// Flushes a descriptor to disk (``DurableWrite/flush(_:need:platform:fsync:)``); tests pass one that fails.
    package typealias Flush = (Int32) -> Int32

    /// Writes `bytes` to `url` atomically, replacing what is there.
    ///
    /// - Parameters:
    ///   - need: what the file's and the directory's flushes must guarantee.
    ///   - beforeRename: runs once the temporary file is flushed, before it is renamed into place
    ///     (tests interrupt a write with it).
    ///   - flush: the file's flush; by default ``DurableWrite/flush(_:need:platform:fsync:)`` with `need`.
    /// - Throws: ``StationClientError`` (`.keyStore`) naming the failed step; `url` is then unchanged.
    package static func replace(_ url: URL, with bytes: [UInt8], need: DurabilityNeed, operation: String,
                                beforeRename: (URL) throws -> Void = { _ in }, flush: Flush? = nil) throws {
        let temporary = try writeTemporary(bytes, beside: url, operation: operation,
                                           flush: flush ?? { DurableWrite.flush($0, need: need) })
        do {
            try beforeRename(temporary)
            guard DurableWrite.rename(temporary.path, onto: url.path, need: need) == 0 else {
                throw failure("cannot rename", temporary, operation: operation)
            }
        } catch {
            unlink(temporary.path)
            if let error = error as? StationClientError { throw error }
            throw StationClientError(.keyStore, operation: operation, message: "the write was interrupted", underlying: error)
        }
    }

    /// Puts `bytes` at `url` only if nothing is there yet, never a partial file: they are written
    /// and flushed under a temporary name, then hard-linked to `url` (which fails when it exists).
    ///
    /// - Parameters:
    ///   - need: what the file's and the directory's flushes must guarantee.
    ///   - flush: the file's flush; by default ``DurableWrite/flush(_:need:platform:fsync:)`` with `need`.
    /// - Returns: `false` when `url` already existed (another process created it first).
    /// - Throws: ``StationClientError`` (`.keyStore`) naming the failed step.
    package static func createExclusively(_ bytes: [UInt8], at url: URL, need: DurabilityNeed, operation: String,
                                          flush: Flush? = nil) throws -> Bool {
        let temporary = try writeTemporary(bytes, beside: url, operation: operation,
                                           flush: flush ?? { DurableWrite.flush($0, need: need) })
        defer { unlink(temporary.path) }
        guard link(temporary.path, url.path) == 0 else {
            if errno == EEXIST { return false }
            throw failure("cannot link \(url.lastPathComponent) to", temporary, operation: operation)
        }
        DurableWrite.flushDirectory(url.deletingLastPathComponent().path, need: need)
        return true
    }

    /// Writes `bytes` to a fresh temporary file beside `url`, flushed and closed.
    ///
    /// - Returns: the temporary file's URL.
    /// - Throws: ``StationClientError`` (`.keyStore`); the descriptor is closed and the file removed.
    private static func writeTemporary(_ bytes: [UInt8], beside url: URL, operation: String, flush: Flush) throws -> URL {
        let temporary = StagedFile.temporary(beside: url, suffix: "tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create", temporary, operation: operation) }
        var open = true
        do {
            defer { if open { close(descriptor) } }
            if let reason = ResponseSink.writeAll(bytes, to: descriptor) {
                throw StationClientError(.keyStore, operation: operation, message: "cannot write \(temporary.path): \(reason)")
            }
            guard flush(descriptor) == 0 else { throw failure("cannot flush", temporary, operation: operation) }
            open = false
            // close(2) releases the descriptor even when it reports an error.
            guard close(descriptor) == 0 else { throw failure("cannot close", temporary, operation: operation) }
        } catch {
            unlink(temporary.path)
            throw error
        }
        return temporary
    }

    private static func failure(_ what: String, _ file: URL, operation: String) -> StationClientError {
        StationClientError(.keyStore, operation: operation, message: "\(what) \(file.path): \(String(cString: strerror(errno)))")
    }
}
