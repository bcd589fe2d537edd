import Foundation
import OrderedJSON

/// A conflict copy, as values: which file it is a copy of, where the other version came from and
/// when. A plan's conflicts carry one (``SyncAction/conflict``), so does a listed post named as a
/// copy (``RemoteFile/conflict``, a copy another device made), and ``init(parsing:)`` reads one
/// from any existing name.
///
/// A copy's name is its original's with the origin and time inserted before the extension:
///
///     notes (conflict from laptop 2026-12-06T061502Z).txt
///     notes (conflict from the station 2026-12-06T061502Z 2).txt
///
/// The grammar, read from the right (`stem` and `ext` are the original's, split at its last `.`
/// unless that is its first character):
///
///     copy   = stem " (conflict from " origin " " time [" " number] ")" ext
///     origin = "the station" / device
///     time   = YYYY "-" MM "-" DD "T" hh mm ss "Z"       ; UTC, whole seconds
///     number = "2" … "100"                               ; the name was taken: the next free one
///
/// `device` is ``SyncOptions/deviceName`` as ``writtenDeviceName(_:)`` writes it: without control
/// characters, `/` or `\`, parentheses as brackets (`my (old) mac` is `my [old] mac`), at most 100
/// bytes, `the station [device]` for a device called `the station`. So every name the sync makes
/// reads back exactly; names by earlier versions (whose device names kept their parentheses)
/// read from the right too: the time is fixed-width and the origin starts after the last
/// ` (conflict from `. A name shortened to fit 255 bytes reads back with its shortened original.
public struct ConflictCopy: Sendable, Hashable, CustomStringConvertible {
    /// The path (relative to the folder) of the file it is a copy of: the same folder, the name
    /// without the inserted part (`notes.txt`).
    public let originalPath: String
    /// The copy's path (`notes (conflict from laptop 2026-12-06T061502Z).txt`).
    public let copyPath: String
    /// The device whose version the copy keeps, as its name was written (``writtenDeviceName(_:)``);
    /// `nil` for a version the station held beside the synced one (`conflict from the station`).
    public let device: String?
    /// When the conflict was found (the device's), or when the other version was made (the
    /// station's): whole seconds, UTC.
    public let date: Date
    /// 1, or 2, 3… when a copy of that origin and time already had the name.
    public let number: Int

    /// Whether the copy keeps a version the station held beside the synced one (``device`` is `nil`).
    public var isFromStation: Bool { device == nil }

    /// `"notes.txt ← notes (conflict from laptop 2026-12-06T061502Z).txt"`.
    public var description: String { "\(originalPath) ← \(copyPath)" }

    init(originalPath: String, copyPath: String, device: String?, date: Date, number: Int) {
        self.originalPath = originalPath
        self.copyPath = copyPath
        self.device = device
        self.date = date
        self.number = number
    }

    /// The conflict copy a file name or path (relative to the folder, `/`-separated: the last name
    /// is read) describes; `nil` when it is not a conflict copy's name. Never traps, whatever the
    /// name (names come from the station).
    public init?(parsing path: String) {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path.utf8.index(after: $0) } ?? path.startIndex
        let folder = String(path[..<slash]), name = String(path[slash...])
        guard !name.isEmpty, name.utf8.count <= 4 * SyncPath.maximumComponentByteCount else { return nil }
        // With the extension the name has, then without one (an original without an extension,
        // whose device or stem has a dot).
        let split = SyncPath.splitExtension(name)
        var readings = [(base: split.stem, ext: split.ext)]
        if !split.ext.isEmpty { readings.append((name, "")) }
        for (base, ext) in readings {
            guard let parsed = Self.parse(base: Array(base.utf8)) else { continue }
            let original = parsed.stem + ext
            guard !parsed.stem.isEmpty else { continue }
            // Read back only what the writer makes of it: the original splits into this stem and extension.
            let again = SyncPath.splitExtension(original)
            guard again.stem.utf8.elementsEqual(parsed.stem.utf8), again.ext.utf8.elementsEqual(ext.utf8) else { continue }
            let made = parsed.stem + Self.suffix(origin: parsed.device, date: parsed.date, number: parsed.number) + ext
            guard made.utf8.elementsEqual(name.utf8) else { continue }
            self.init(originalPath: folder + original, copyPath: path, device: parsed.device, date: parsed.date, number: parsed.number)
            return
        }
        return nil
    }

    /// The text inserted before the extension: ` (conflict from laptop 2026-12-06T061502Z)`, with
    /// ` 2`… before the `)` for a `number` above 1. `origin` is a written device name, or `nil`
    /// for the station.
    static func suffix(origin device: String?, date: Date, number: Int) -> String {
        " (\(marker)\(device ?? station) \(LocalFolder.stamp(date))" + (number > 1 ? " \(number)" : "") + ")"
    }

    private static let marker = "conflict from "
    private static let station = "the station"
    /// The longest device name written, in UTF-8 bytes.
    static let maximumDeviceByteCount = 100

    /// A device name as conflict copies write it: control characters, `/` and `\` left out, `(`
    /// and `)` written as `[` and `]`, cut to 100 bytes (whole characters), `unnamed device` for
    /// an empty one and `the station [device]` for `the station`. Compare it with ``device`` to
    /// tell this device's copies (`ConflictCopy.writtenDeviceName(sync.options.deviceName)`).
    public static func writtenDeviceName(_ name: String) -> String {
        var written = ""
        for character in name {
            var text = String(character.unicodeScalars.filter {
                $0.properties.generalCategory != .control && $0 != "/" && $0 != "\\"
            }.map(Character.init))
            text = text.replacingOccurrences(of: "(", with: "[").replacingOccurrences(of: ")", with: "]")
            guard written.utf8.count + text.utf8.count <= maximumDeviceByteCount else { break }
            written += text
        }
        if written.isEmpty { return "unnamed device" }
        return written == station ? "the station [device]" : written
    }

    /// A name's inserted part, read from the right: the stem before it, the origin, the time and
    /// the number; `nil` when `base` (the name without the extension) does not end with one.
    private static func parse(base: [UInt8]) -> (stem: String, device: String?, date: Date, number: Int)? {
        guard base.last == UInt8(ascii: ")") else { return nil }
        var end = base.count - 1
        // The number: digits after a space, right before the `)`.
        var number = 1
        var digits = end
        while digits > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(base[digits - 1]) { digits -= 1 }
        if digits < end {
            guard end - digits <= 3, digits > 0, base[digits - 1] == UInt8(ascii: " ") else { return nil }
            number = base[digits..<end].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard number >= 2 else { return nil }
            end = digits - 1
        }
        // The time: `YYYY-MM-DDThhmmssZ`, after a space.
        let stampLength = 18
        guard end >= stampLength + 1, base[end - stampLength - 1] == UInt8(ascii: " ") else { return nil }
        let stamp = base[(end - stampLength)..<end]
        guard let date = date(stamp: Array(stamp)) else { return nil }
        end -= stampLength + 1
        // The origin: after the last ` (conflict from `.
        let opening = Array(" (\(marker)".utf8)
        var start = end - opening.count
        while start >= 0, !base[start..<(start + opening.count)].elementsEqual(opening) { start -= 1 }
        guard start >= 0 else { return nil }
        let origin = String(decoding: base[(start + opening.count)..<end], as: UTF8.self)
        let stem = String(decoding: base[..<start], as: UTF8.self)
        return (stem, origin == station ? nil : origin, date, number)
    }

    /// The date of a copy's time (`2026-12-06T061502Z`), `nil` for anything else.
    private static func date(stamp: [UInt8]) -> Date? {
        guard stamp.count == 18, stamp[10] == UInt8(ascii: "T"), stamp[17] == UInt8(ascii: "Z") else { return nil }
        let time = stamp[11..<17]
        guard time.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let text = String(decoding: stamp[0..<11], as: UTF8.self) + String(decoding: time.prefix(2), as: UTF8.self) + ":"
            + String(decoding: time.dropFirst(2).prefix(2), as: UTF8.self) + ":" + String(decoding: time.suffix(2), as: UTF8.self) + "Z"
        return RFC3339.date(text)
    }
}
