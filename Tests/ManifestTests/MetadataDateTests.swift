import Foundation
import Manifest
import Testing
import TestSupport
import OrderedJSON

/// Metadata with a `Date`, as an app would declare it.
private struct Note: Codable, Equatable {
    var filename: String
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case filename
        case createdAt = "created_at"
    }
}

@Suite("Dates in metadata: integer Unix seconds out, Unix seconds or ISO-8601 in")
struct MetadataDateTests {
    static let newYear = Date(timeIntervalSince1970: 1_704_067_200)

    @Test("A Date is written as integer Unix seconds, as PROTOCOL.md's \"created_at\": 1704067200")
    func writesIntegerUnixSeconds() throws {
        let text = String(decoding: try WireJSON.encode(Note(filename: "a", createdAt: Self.newYear)), as: UTF8.self)
        #expect(text == #"{"filename":"a","created_at":1704067200}"#)
        // Rounded down, never Foundation's seconds since 2001 (which would read as 1993).
        let later = Note(filename: "a", createdAt: Self.newYear.addingTimeInterval(0.9))
        #expect(String(decoding: try WireJSON.encode(later), as: UTF8.self) == #"{"filename":"a","created_at":1704067200}"#)
        let before1970 = Note(filename: "a", createdAt: Date(timeIntervalSince1970: -1.5))
        #expect(String(decoding: try WireJSON.encode(before1970), as: UTF8.self) == #"{"filename":"a","created_at":-2}"#)
    }

    @Test("The other forms are there when asked for, and a custom one")
    func otherEncodings() throws {
        let note = Note(filename: "a", createdAt: Self.newYear.addingTimeInterval(0.5))
        func text(_ dates: JSONDateEncoding) throws -> String {
            String(decoding: try WireJSON.encode(note, dates: dates), as: UTF8.self)
        }
        #expect(try text(.unixSecondsFractional) == #"{"filename":"a","created_at":1704067200.5}"#)
        #expect(try text(.iso8601) == #"{"filename":"a","created_at":"2024-01-01T00:00:00Z"}"#)
        #expect(try text(.custom { .number(JSONNumber(Int($0.timeIntervalSince1970 * 1000))) })
                == #"{"filename":"a","created_at":1704067200500}"#)
        #expect(throws: WireFormatError.self) {
            try WireJSON.encode(Note(filename: "a", createdAt: Date(timeIntervalSince1970: .infinity)))
        }
    }

    @Test("Reading accepts integer and fractional Unix seconds and ISO-8601 strings", arguments: [
        (#"1704067200"#, 1_704_067_200.0),
        (#"1704067200.25"#, 1_704_067_200.25),
        (#"1.7040672e9"#, 1_704_067_200.0),
        (#""2024-01-01T00:00:00Z""#, 1_704_067_200.0),
        (#""2024-01-01T01:00:00+01:00""#, 1_704_067_200.0),
        (#""2024-01-01T00:00:00.500Z""#, 1_704_067_200.5),
        (#""2024-01-01T01:00:00.500000+01:00""#, 1_704_067_200.5),
    ])
    func readsEveryForm(json: String, seconds: Double) throws {
        let note = try WireJSON.decode(Note.self, from: Array(#"{"filename":"a","created_at":\#(json)}"#.utf8))
        #expect(abs(note.createdAt.timeIntervalSince1970 - seconds) < 0.001)
    }

    @Test("What is not a date is a typed error; a custom reader overrides", arguments: [#""yesterday""#, "true", "[]"])
    func refusesNonDates(json: String) throws {
        let bytes = Array(#"{"filename":"a","created_at":\#(json)}"#.utf8)
        #expect(throws: WireFormatError.self) { try WireJSON.decode(Note.self, from: bytes) }
        let fixed = try WireJSON.decode(Note.self, from: bytes, dates: .custom { _ in Self.newYear })
        #expect(fixed.createdAt == Self.newYear)
    }

    @Test("Nested and optional dates use the same rules")
    func nestedDates() throws {
        struct Album: Codable {
            var notes: [Note]
            var archivedAt: Date?
        }
        let album = Album(notes: [Note(filename: "a", createdAt: Self.newYear)], archivedAt: Self.newYear)
        let text = String(decoding: try WireJSON.encode(album), as: UTF8.self)
        #expect(text == #"{"notes":[{"filename":"a","created_at":1704067200}],"archivedAt":1704067200}"#)
        let read = try WireJSON.decode(Album.self, from: Array(#"{"notes":[{"filename":"a","created_at":"2024-01-01T00:00:00Z"}]}"#.utf8))
        #expect(read.notes.first?.createdAt == Self.newYear)
        #expect(read.archivedAt == nil)
    }

    struct InteropRequest: Encodable { var swift: [String] }
    struct InteropResponse: Decodable {
        struct Read: Decodable { var type: String; var utc: String }
        var written: [String]
        var read: [Read]
    }

    @Test("Interop: Python clients read the SDK's dates as integers of the right instant; the SDK reads theirs",
          .enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func pythonInterop() throws {
        let swift = [try WireJSON.encode(Note(filename: "report.pdf", createdAt: Self.newYear))].map { String(decoding: $0, as: UTF8.self) }
        let response = try InteropPython.call("metadata_dates.py", InteropRequest(swift: swift), as: InteropResponse.self)
        #expect(response.read.map(\.type) == ["int"])
        #expect(response.read.map(\.utc) == ["2024-01-01T00:00:00+00:00"])
        #expect(response.written.count == 4)
        let expected: [Double] = [1_704_067_200, 1_704_067_200.5, 1_704_067_200.5, 1_704_067_200.5]
        for (text, seconds) in zip(response.written, expected) {
            let note = try WireJSON.decode(Note.self, from: Array(text.utf8))
            #expect(abs(note.createdAt.timeIntervalSince1970 - seconds) < 0.001, "\(text)")
        }
    }
}
