/// Times in posts are Unix seconds from the station or another client: untrusted, so a reader keeps
/// only those a calendar date can be written for.
enum UnixSeconds {
    /// 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z: every time RFC 3339 writes with four digits.
    static let representable: ClosedRange<Int> = -62_135_596_800...253_402_300_799

    /// `seconds` when it is ``representable``, otherwise `nil` (read as absent).
    static func checked(_ seconds: Int) -> Int? { representable.contains(seconds) ? seconds : nil }
}
