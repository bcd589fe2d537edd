import Foundation
import LoopbackHTTP
#if canImport(Glibc)
import Glibc
#endif

/// A server program the tests start (a TLS front, `nghttpx`), its output in a log file, killed by
/// `stop()` or when its owner goes away.
///
/// Only macOS and Linux start programs: elsewhere (iOS, tvOS, watchOS, visionOS) `init` throws and
/// the tests that need a helper are skipped (`.enabled(if: Programs.canStart, …)`).
public final class HelperProcess: @unchecked Sendable {
    /// The program's standard error (and standard output, unless it is read through `output`).
    public let log: URL
    /// The program's standard output when started with `readOutput: true`.
    public let output: FileHandle?
    #if os(macOS) || os(Linux)
    private let process: Process
    #endif
    private let input = Pipe()  // held open: programs that watch standard input stop at its end

    /// Starts `executable` (looked up in `PATH`) with `arguments`.
    /// - Throws: launch errors (`executable` missing); `HelperProcessFailure` where no program starts.
    public init(_ executable: String, _ arguments: [String], log: URL, readOutput: Bool = false) throws {
        #if os(macOS) || os(Linux)
        self.log = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.standardInput = input
        process.standardError = logHandle
        if readOutput {
            let pipe = Pipe()
            process.standardOutput = pipe
            output = pipe.fileHandleForReading
        } else {
            process.standardOutput = logHandle
            output = nil
        }
        try process.run()
        #else
        throw HelperProcessFailure("\(executable) cannot be started: this platform starts no programs")
        #endif
    }

    deinit { stop() }

    /// Whether the program is still running (none ever runs where none can be started).
    public var isRunning: Bool {
        #if os(macOS) || os(Linux)
        process.isRunning
        #else
        false
        #endif
    }

    /// What the program has logged so far.
    public var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The next line of standard output, or `nil` at its end (the program exited).
    public func readOutputLine() -> String? {
        guard let output else { return nil }
        var line = Data()
        while true {
            let byte = output.readData(ofLength: 1)
            if byte.isEmpty { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte.first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Stops the program. Safe to call more than once.
    ///
    /// With SIGKILL: a process started from a Swift concurrency thread inherits that thread's
    /// signal mask, in which SIGTERM (what `Process.terminate()` sends) is blocked.
    public func stop() {
        #if os(macOS) || os(Linux)
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        #endif
    }
}

/// Why a helper program could not be started.
public struct HelperProcessFailure: Error, CustomStringConvertible {
    /// What went wrong, with the program's log.
    public let description: String

    /// A failure described by `description`.
    public init(_ description: String) { self.description = description }
}

/// The package root, from this file's path (Tests/TransportTestSupport/HelperProcess.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Waits until something accepts TCP connections on 127.0.0.1:`port`, or `deadline` passes, or
/// `process` exits; returns whether it listens.
func waitUntilListening(port: UInt16, process: HelperProcess, deadline: Date) -> Bool {
    while Date() < deadline, process.isRunning {
        let descriptor = LoopbackSocket.make()
        guard descriptor >= 0 else { return false }
        let connected = LoopbackSocket.connects(descriptor, toPort: port)
        close(descriptor)
        if connected { return true }
        usleep(20_000)
    }
    return false
}
