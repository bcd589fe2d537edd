import Foundation
@testable import OrderedJSON
import Testing

/// RFC 3339 times are written for any date, however far out of range.
@Suite("RFC 3339 times")
struct RFC3339Tests {
    @Test(arguments: [
        (9.3e18, "9999-12-31T23:59:59Z"), (-9.3e18, "0001-01-01T00:00:00Z"),
        (Double.infinity, "9999-12-31T23:59:59Z"), (-Double.infinity, "0001-01-01T00:00:00Z"),
        (Double.nan, "0001-01-01T00:00:00Z"),
        (253_402_300_799.0, "9999-12-31T23:59:59Z"), (253_402_300_800.0, "9999-12-31T23:59:59Z"),
        (-62_135_596_800.0, "0001-01-01T00:00:00Z"), (-62_135_596_801.0, "0001-01-01T00:00:00Z"),
        (1_796_537_702.25, "2026-12-06T06:15:02.25Z"), (0, "1970-01-01T00:00:00Z"),
    ])
    func anyDateIsWrittenWithinTheFourDigitYears(seconds: Double, expected: String) {
        #expect(RFC3339.string(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test func theEndsReadBack() {
        #expect(RFC3339.date("9999-12-31T23:59:59Z")?.timeIntervalSince1970 == RFC3339.latestSecond)
        #expect(RFC3339.date("0001-01-01T00:00:00Z")?.timeIntervalSince1970 == RFC3339.earliestSecond)
    }
}
