import OrderedJSON

/// A UTC calendar date and time computed from epoch seconds without Foundation formatters (which
/// are neither cheap nor guaranteed thread-safe on every platform).
struct CivilTime: Equatable {
    var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int

    /// The UTC date and time `epochSeconds` after 1970-01-01 (``CivilDate`` does the calendar).
    init(epochSeconds: Int64) {
        let days = CivilDate.days(epochSeconds: epochSeconds)
        let secondsOfDay = Int(epochSeconds - Int64(days) * 86_400)
        hour = secondsOfDay / 3600
        minute = secondsOfDay % 3600 / 60
        second = secondsOfDay % 60
        weekday = ((days % 7) + 11) % 7  // 0 = Sunday; 1970-01-01 was a Thursday
        (year, month, day) = CivilDate.date(days: days)
    }

    /// The IMF-fixdate form HTTP uses in `Date`: `Sun, 29 Nov 2026 14:30:00 GMT`.
    var httpDate: String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[weekday]), \(two(day)) \(months[month - 1]) \(year) \(two(hour)):\(two(minute)):\(two(second)) GMT"
    }
}
