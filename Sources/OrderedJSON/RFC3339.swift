#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 3339 times: the package's reader and writer, for IPNS records' validity (Go's
/// `RFC3339Nano`: `2026-01-02T03:04:05.123456789Z`) and ISO-8601 dates in JSON.
package enum RFC3339 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `nil` for anything else.
    package static func date(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var value = 0
            for i in at..<at + count {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 45, let month = digits(5, 2), b[7] == 45,
              let day = digits(8, 2), b[10] == 84 || b[10] == 116, let hour = digits(11, 2), b[13] == 58,
              let minute = digits(14, 2), b[16] == 58, let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < b.count, b[index] == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while index < b.count, (48...57).contains(b[index]) {
                fraction += Double(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offset = 0
        switch b[index] {
        case 90, 122:
            index += 1
        case 43, 45:
            guard let hours = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == 58,
                  let minutes = digits(index + 4, 2) else { return nil }
            offset = (hours * 60 + minutes) * 60 * (b[index] == 43 ? 1 : -1)
            index += 6
        default: return nil
        }
        guard index == b.count else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// The first and last second of the years RFC 3339 writes (0001-01-01T00:00:00Z, 9999-12-31T23:59:59Z).
    static let earliestSecond = -62_135_596_800.0, latestSecond = 253_402_300_799.0

    /// The UTC form with nanoseconds, trailing zeros dropped (as Go's `RFC3339Nano` writes it).
    /// Any date gives a valid string: one outside the years 0001…9999 (or infinite) is clamped to
    /// the nearest end, and NaN gives the earliest.
    package static func string(_ date: Date) -> String {
        var total = date.timeIntervalSince1970
        // Beyond Int's range, Int(_:) traps; beyond the four-digit years, the text is not RFC 3339.
        if total.isNaN || total < earliestSecond { total = earliestSecond }
        if total > latestSecond { total = latestSecond }
        var seconds = Int(total.rounded(.down))
        var nanos = Int(((total - Double(seconds)) * 1e9).rounded())
        if nanos >= 1_000_000_000 { seconds += 1; nanos -= 1_000_000_000 }
        let days = CivilDate.days(epochSeconds: Int64(seconds))
        let rest = seconds - days * 86_400
        let (year, month, day) = CivilDate.date(days: days)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        var text = "\(String(repeating: "0", count: max(0, 4 - String(year).count)))\(year)-\(two(month))-\(two(day))T"
        text += "\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))"
        if nanos > 0 {
            var fraction = String(nanos)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }
}
