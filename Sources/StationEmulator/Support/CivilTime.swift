/// A UTC calendar date and time computed from epoch seconds without Foundation formatters (which
/// are neither cheap nor guaranteed thread-safe on every platform).
struct CivilTime: Equatable {
    var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int

    /// Howard Hinnant's days-from-civil inverse, valid for the proleptic Gregorian calendar.
    init(epochSeconds: Int64) {
        let days = Int(epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400)
        let secondsOfDay = Int(epochSeconds - Int64(days) * 86_400)
        hour = secondsOfDay / 3600
        minute = secondsOfDay % 3600 / 60
        second = secondsOfDay % 60
        weekday = ((days % 7) + 11) % 7  // 0 = Sunday; 1970-01-01 was a Thursday
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The IMF-fixdate form HTTP uses in `Date`: `Sun, 29 Nov 2026 14:30:00 GMT`.
    var httpDate: String {
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[weekday]), \(two(day)) \(months[month - 1]) \(year) \(two(hour)):\(two(minute)):\(two(second)) GMT"
    }
}
