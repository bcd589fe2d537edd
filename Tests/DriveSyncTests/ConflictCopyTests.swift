import Foundation
import Manifest
import StationClient
import Testing
@testable import DriveSync

/// Conflict copies as values: the names the planner makes read back exactly, whatever the device
/// and file names; both devices of a conflict see its origin and time.
@Suite("Conflict copies")
struct ConflictCopyTests {
    static let devices = ["laptop", "my (old) mac", "the station", "", "a (conflict from b", "x 2026-01-01T000000Z", "pc 2",
                          "mac.local", "a) (b", "tab\there/and\\back", String(repeating: "é", count: 120), "the station 2",
                          "e\u{301}", ")", "(conflict from the station"]
    static let names = ["notes.txt", "notes", ".bashrc", "a.b.c", "x.tx)t", "notes (conflict from a 2026-01-01T000000Z).txt",
                        "e\u{301}.txt", "a. (conflict from b 2026-01-01T000000Z)", "a.\u{301}b", "..x", "x.",
                        String(repeating: "n", count: 250) + ".txt", "a." + String(repeating: "e", count: 200),
                        "n (conflict from the station 2026-01-01T000000Z 3)"]
    static let dates = [Date(timeIntervalSince1970: 1_796_537_702.75), Date(timeIntervalSince1970: 0),
                        Date(timeIntervalSince1970: 1e15), Date(timeIntervalSince1970: -1e15), Date(timeIntervalSince1970: .nan)]

    @Test func namesTheSyncMakesReadBackExactly() throws {
        for device in Self.devices + [nil] {
            let written = device.map(ConflictCopy.writtenDeviceName)
            for name in Self.names {
                let path = try SyncPath(relative: "docs/" + name)
                for date in Self.dates {
                    for number in [1, 2, 100] {
                        let suffix = ConflictCopy.suffix(origin: written, date: date, number: number)
                        guard let copy = path.inserting(suffix) else { continue }
                        let parsed = try #require(ConflictCopy(parsing: copy.description), "\(copy)")
                        #expect(parsed.device == written && parsed.isFromStation == (device == nil), "\(copy)")
                        #expect(LocalFolder.stamp(parsed.date) == LocalFolder.stamp(date) && parsed.number == number, "\(copy)")
                        #expect(parsed.copyPath == copy.description)
                        let (stem, ext) = SyncPath.splitExtension(name)
                        if (stem + suffix + ext).utf8.count <= SyncPath.maximumComponentByteCount {
                            #expect(parsed.originalPath.utf8.elementsEqual("docs/\(name)".utf8), "\(copy) → \(parsed.originalPath)")
                        } else {
                            // Shortened to fit: its shortened original makes the same name.
                            let original = try SyncPath(relative: parsed.originalPath)
                            #expect(original.inserting(suffix) == copy, "\(copy)")
                        }
                    }
                }
            }
        }
    }

    @Test func writtenDeviceNamesCannotBeMistaken() {
        #expect(ConflictCopy.writtenDeviceName("my (old) mac") == "my [old] mac")
        #expect(ConflictCopy.writtenDeviceName("the station") == "the station [device]")
        #expect(ConflictCopy.writtenDeviceName("") == "unnamed device" && ConflictCopy.writtenDeviceName("\u{7}/") == "unnamed device")
        #expect(ConflictCopy.writtenDeviceName(String(repeating: "é", count: 120)).utf8.count == 100)
    }

    @Test func namesOfEarlierVersionsAndOthersAreReadOrRefused() throws {
        // Earlier versions kept a device name's parentheses: read from the right.
        let old = try #require(ConflictCopy(parsing: "a/notes (conflict from my (old) laptop 2026-12-06T061502Z 2).txt"))
        #expect(old.originalPath == "a/notes.txt" && old.device == "my (old) laptop" && old.number == 2)
        #expect(old.date == Date(timeIntervalSince1970: 1_796_537_702))
        let station = try #require(ConflictCopy(parsing: "notes (conflict from the station 2026-12-06T061502Z)"))
        #expect(station.isFromStation && station.originalPath == "notes")
        for name in ["notes.txt", "", "/", "notes (conflict from laptop).txt", "notes (conflict from laptop 2026-13-06T061502Z).txt",
                     "notes (conflict from laptop 2026-12-06T061502Z 1).txt", "notes (conflict from laptop 2026-12-06T061502Z 02).txt",
                     "notes (conflict from laptop 2026-12-06T061502Z 1000).txt", " (conflict from laptop 2026-12-06T061502Z)",
                     "notes (conflict from laptop 2026-12-06T246000Z).txt", "notes (conflict from laptop 2026-12-06T061502Z)x.txt",
                     "notes(conflict from laptop 2026-12-06T061502Z).txt", "(conflict from laptop 2026-12-06T061502Z)"] {
            #expect(ConflictCopy(parsing: name) == nil, "\(name)")
        }
        // Any bytes: no trap.
        var generator = SystemRandomNumberGenerator()
        let pieces = [" (conflict from ", "the station", " 2026-12-06T061502Z", ")", ".", " 2", "é", "\u{301}", "(", "/", "x"]
        for _ in 0..<2000 {
            let name = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            if let parsed = ConflictCopy(parsing: name) { #expect(parsed.copyPath == name) }
        }
    }

    /// The laptop's conflict names the laptop and the time as values; the phone receives the copy
    /// as a conflict copy, not a plain download.
    @Test func bothDevicesOfAConflictSeeItsOrigin() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("notes.txt", "first")
            _ = try await rig.converge()
            try rig.laptop.write("notes.txt", "laptop's notes")
            try rig.phone.write("notes.txt", "phone's notes")
            try await rig.phone.syncExpectingSuccess()
            let plan = try await rig.laptop.sync(SyncOptions(maximumDeletions: 100, deviceName: "laptop (work)")).plan()
            let action = try #require(plan.actions.first { $0.kind == .conflict })
            let conflict = try #require(action.conflict)
            #expect(conflict.originalPath == "notes.txt" && conflict.copyPath == action.conflictCopyPath)
            #expect(conflict.device == "laptop [work]" && conflict.device == ConflictCopy.writtenDeviceName("laptop (work)"))
            #expect(conflict.date == Date(timeIntervalSince1970: plan.date.timeIntervalSince1970.rounded(.down)))
            _ = try await rig.laptop.sync().run(plan)

            let received = try await rig.phone.sync().plan()
            let download = try #require(received.actions.first { $0.kind == .download })
            #expect(download.path == conflict.copyPath && download.conflict == conflict)
            let file = try #require(received.remoteFiles.first { $0.path == conflict.copyPath })
            #expect(file.conflict == conflict && file.remotePath == "/" + conflict.copyPath)
            #expect(received.remoteFiles.first { $0.path == "notes.txt" }?.conflict == nil)
        }
    }
}
