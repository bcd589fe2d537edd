import Foundation
import Transport

/// The emulator's log: lines formatted like a station's Python log, kept in memory, and
/// optionally appended to a file and echoed to standard error.
///
/// The pairing PIN appears only here, exactly as on a station:
/// `<ts>  cipher_station.main  INFO  >>> PAIRING PIN: 404467 <<< (expires in 5 minutes)`.
/// Tests read it with ``latestPIN`` or ``pins``; an out-of-process client reads the log file
/// with the station tray app's pattern `PAIRING PIN:\s*(\d{4,8})`.
public final class StationLog: Sendable {
    private struct State {
        var lines: [String] = []
        var pins: [String] = []
        var file: FileHandle?
    }

    private let state: Locked<State>
    private let clock: any StationClock
    private let echoToStandardError: Bool
    /// Lines kept in memory (older ones are dropped; the file keeps everything).
    public static let retainedLineCount = 10_000

    /// Creates a log that appends to `file` (created if missing) and, when `echoToStandardError`
    /// is set, copies each line to standard error.
    ///
    /// - Throws: `CocoaError` when the log file cannot be created or opened.
    public init(file: URL? = nil, echoToStandardError: Bool = false, clock: any StationClock = SystemClock()) throws {
        var handle: FileHandle?
        if let file {
            if !FileManager.default.fileExists(atPath: file.path) {
                guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
                }
            }
            handle = try FileHandle(forWritingTo: file)
            try handle?.seekToEnd()
        }
        state = Locked(State(file: handle))
        self.clock = clock
        self.echoToStandardError = echoToStandardError
    }

    /// Every line still held in memory, oldest first.
    public var lines: [String] { state.value.lines }

    /// Every pairing PIN logged so far, oldest first.
    public var pins: [String] { state.value.pins }

    /// The most recent pairing PIN, or `nil` before the first `/delegate/start`.
    public var latestPIN: String? { state.value.pins.last }

    /// Appends an INFO line from `logger` (a Python-style logger name).
    public func info(_ message: String, logger: String = "cipher_station.main") {
        write(level: "INFO", logger: logger, message)
    }

    /// Appends a WARNING line from `logger`.
    public func warning(_ message: String, logger: String = "cipher_station.main") {
        write(level: "WARNING", logger: logger, message)
    }

    /// Logs a pairing PIN with the station's exact wording and remembers it for ``latestPIN``.
    func pairingPIN(_ pin: String) {
        state.withLock { $0.pins.append(pin) }
        info(">>> PAIRING PIN: \(pin) <<< (expires in 5 minutes)")
    }

    private func write(level: String, logger: String, _ message: String) {
        let line = "\(Self.timestamp(clock.now()))  \(logger)  \(level)  \(message)"
        state.withLock { state in
            state.lines.append(line)
            if state.lines.count > Self.retainedLineCount { state.lines.removeFirst(state.lines.count - Self.retainedLineCount) }
            if let file = state.file { try? file.write(contentsOf: Data((line + "\n").utf8)) }
        }
        if echoToStandardError { FileHandle.standardError.write(Data((line + "\n").utf8)) }
    }

    /// Python logging's default `asctime`: `2026-11-29 14:30:00,123` (UTC here).
    static func timestamp(_ seconds: Double) -> String {
        let whole = Int64(seconds.rounded(.down))
        let millis = Int((seconds - Double(whole)) * 1000)
        let civil = CivilTime(epochSeconds: whole)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2)) "
            + "\(pad(civil.hour, 2)):\(pad(civil.minute, 2)):\(pad(civil.second, 2)),\(pad(millis, 3))"
    }
}
