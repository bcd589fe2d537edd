import Foundation
import Transport
import StationClient
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tool writes and reads: human lines or one JSON document on standard output,
/// progress and prompts on standard error, answers from the terminal or standard input.
struct Console: Sendable {
    /// Whether `--json` was given (stdout then holds exactly one JSON document).
    var json: Bool
    var stdinIsTerminal = isatty(STDIN_FILENO) == 1
    var stderrIsTerminal = isatty(STDERR_FILENO) == 1

    /// A line for people; suppressed under `--json`.
    func say(_ line: TerminalText) {
        guard !json else { return }
        FileHandle.standardOutput.write(Data((line.rendered + "\n").utf8))
    }

    /// A line on standard error (warnings, prompts); always shown.
    func note(_ line: TerminalText) {
        FileHandle.standardError.write(Data((line.rendered + "\n").utf8))
    }

    /// Prints `value` as the command's JSON document (only under `--json`). Its keys are the
    /// property names in snake case (`stationUID` is `station_uid`), so an output record
    /// spells out a key only where it differs.
    func emit<Value: Encodable>(_ value: Value) {
        guard json else { return }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// `rows` under `header` as ``Format/table(_:_:)`` lays them out, each line escaped (cells hold
    /// the station's strings); with no rows, the line `empty` if given.
    func sayTable(_ header: [String], _ rows: [[String]], empty: TerminalText? = nil) {
        guard !rows.isEmpty else {
            if let empty { say(empty) }
            return
        }
        for line in Format.table(header, rows) { say("\(line)") }
    }

    /// Reads one line from standard input (`nil` at end of input).
    func readLine() -> String? {
        Swift.readLine(strippingNewline: true)
    }

    /// Asks on the terminal (standard error) and reads the answer; with `secret` the typing is not echoed.
    func ask(_ prompt: TerminalText, secret: Bool = false) -> String? {
        FileHandle.standardError.write(Data(prompt.rendered.utf8))
        guard secret, stdinIsTerminal else { return readLine() }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return readLine() }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine()
    }

    /// A progress handler: a redrawn bar on a terminal, nothing otherwise (plain lines are
    /// printed by the command when the transfer ends), nothing under `--json`.
    func progress(_ label: TerminalText) -> ProgressHandler? {
        guard stderrIsTerminal, !json else { return nil }
        let bar = ProgressBar(label: label)
        return { bar.update($0) }
    }

    /// Ends a progress bar's line.
    func finishProgress() {
        guard stderrIsTerminal, !json else { return }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// A one-line progress bar on standard error, redrawn at most every 1 % of progress.
final class ProgressBar: Sendable {
    private let label: String
    private let lastPermille = Locked(-1)

    init(label: TerminalText) { self.label = label.rendered }

    func update(_ progress: ByteProgress) {
        let width = 30
        guard let total = progress.total, total > 0 else {
            FileHandle.standardError.write(Data("\r\(label) \(Format.bytes(progress.completed))".utf8))
            return
        }
        let permille = Int(min(1000, progress.completed * 1000 / total))
        let redraw = lastPermille.withLock { last -> Bool in
            guard permille / 10 != last / 10 || last < 0 else { return false }
            last = permille
            return true
        }
        guard redraw else { return }
        let filled = width * permille / 1000
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        let line = "\r\(label) [\(bar)] \(permille / 10)% \(Format.bytes(progress.completed))/\(Format.bytes(total))"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// Human formats.
enum Format {
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// A time left: seconds under a minute, then minutes (and hours), rounded up so that a last
    /// fraction of a second does not read "0 s".
    static func duration(_ duration: Duration) -> String {
        let seconds = Int64(duration.inSeconds.rounded(.up))
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min \(seconds % 60) s" }
        return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }

    static func date(_ unixSeconds: Int?) -> String {
        guard let unixSeconds else { return "-" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
    }

    /// Rows under a header line, each column as wide as its widest cell, two spaces between
    /// columns and none at the end of a line.
    static func table(_ header: [String], _ rows: [[String]]) -> [String] {
        let lines = [header] + rows
        let widths = header.indices.map { column in lines.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        return lines.map { cells in
            var line = ""
            for (column, cell) in cells.enumerated() where column < widths.count {
                line += column == 0 ? "" : "  "
                line += column == widths.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }
}

extension Duration {
    /// The duration in seconds, fractions included.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
