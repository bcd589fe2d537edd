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
package enum AtomicFile {
    /// Flushes a descriptor to disk (``DurableWrite``: `F_FULLFSYNC` on Darwin); tests pass one that fails.
    package typealias Flush = (Int32) -> Int32

    /// Writes `bytes` to `url` atomically, replacing what is there.
    ///
    /// - Parameter beforeRename: runs once the temporary file is flushed, before it is renamed
    ///   into place (tests interrupt a write with it).
    /// - Throws: ``StationClientError`` (`.keyStore`) naming the failed step; `url` is then unchanged.
    package static func replace(_ url: URL, with bytes: [UInt8], operation: String, beforeRename: (URL) throws -> Void = { _ in },
                        flush: Flush = { DurableWrite.flush($0) }) throws {
        let temporary = try writeTemporary(bytes, beside: url, operation: operation, flush: flush)
        do {
            try beforeRename(temporary)
            guard DurableWrite.rename(temporary.path, onto: url.path) == 0 else { throw failure("cannot rename", temporary, operation: operation) }
        } catch {
            unlink(temporary.path)
            if let error = error as? StationClientError { throw error }
            throw StationClientError(.keyStore, operation: operation, message: "the write was interrupted", underlying: error)
        }
    }

    /// Puts `bytes` at `url` only if nothing is there yet, never a partial file: they are written
    /// and flushed under a temporary name, then hard-linked to `url` (which fails when it exists).
    ///
    /// - Returns: `false` when `url` already existed (another process created it first).
    /// - Throws: ``StationClientError`` (`.keyStore`) naming the failed step.
    package static func createExclusively(_ bytes: [UInt8], at url: URL, operation: String, flush: Flush = { DurableWrite.flush($0) }) throws -> Bool {
        let temporary = try writeTemporary(bytes, beside: url, operation: operation, flush: flush)
        defer { unlink(temporary.path) }
        guard link(temporary.path, url.path) == 0 else {
            if errno == EEXIST { return false }
            throw failure("cannot link \(url.lastPathComponent) to", temporary, operation: operation)
        }
        syncDirectory(url.deletingLastPathComponent())
        return true
    }

    /// Flushes a directory's entries so a rename or link survives a crash (best effort).
    package static func syncDirectory(_ directory: URL) {
        DurableWrite.flushDirectory(directory.path)
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
