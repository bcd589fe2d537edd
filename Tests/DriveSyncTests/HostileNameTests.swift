import Foundation
import Manifest
import StationClient
import Testing
@testable import DriveSync

/// Remote names are the station's data: nothing they say writes outside the folder.
@Suite("Hostile remote names")
struct HostileNameTests {
    @Test func aHostileManifestWritesNothingOutsideTheFolder() async throws {
        try await SyncRig.with { rig in
            let outside = rig.laptop.folder.deletingLastPathComponent()
            // The laptop's folder holds a link to a folder outside it: never followed.
            let elsewhere = outside.appendingPathComponent("elsewhere", isDirectory: true)
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: rig.laptop.folder.appendingPathComponent("linked"), withDestinationURL: elsewhere)
            let before = try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted()

            let hostile: [(path: String?, filename: String)] = [
                ("/", "../escape.txt"), ("/../../", "escape2.txt"), ("/a/../../", "escape3.txt"), ("/", ".."), ("/", "."),
                ("/", "a/b.txt"), ("relative/", "r.txt"), ("/", "nul\u{0}.txt"), ("/", "bell\u{7}.txt"), ("/", "esc\u{1b}[2J.txt"),
                ("/", String(repeating: "x", count: 300)), ("/", "back\\slash.txt"), ("/.cipher-sync/trash/", "planted.txt"),
                ("/.CIPHER-SYNC/", "planted2.txt"), ("//", "empty-folder.txt"), ("/linked/", "through-link.txt"),
                ("/", "Readme.txt"), ("/", "README.txt"), ("/Docs/", "one.txt"), ("/docs/", "two.txt"), ("/", "fine.txt"),
            ]
            for (path, filename) in hostile {
                _ = try await rig.phone.client.publish(data: Data("hostile \(filename)".utf8),
                                                       metadata: DriveFileMetadata(filename: filename, sizeBytes: 8 + filename.utf8.count, path: path))
            }
            let report = try await rig.laptop.sync().sync()
            // Written: the valid names, the first spelling of each colliding pair.
            #expect(try rig.laptop.tree().keys.sorted() == ["Docs/one.txt", "Readme.txt", "empty-folder.txt", "fine.txt"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted() == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
            // Each refused name is reported, as a remote item, with why.
            let refused = report.skipped.filter(\.isRemote)
            #expect(refused.filter { $0.reason.kind == "invalidName" }.count == 14, "\(refused)")
            #expect(Set(refused.filter { $0.reason.kind == "nameCollision" }.map(\.path)) == ["README.txt", "docs/two.txt"])
            // The link on the way is not followed: what is under it gets no decision, and the rest is in sync.
            #expect(report.failures.isEmpty, "\(report.failures)")
            #expect(!report.completed.contains { $0.path.hasPrefix("linked/") })
            #expect(report.skipped.contains { $0.path == "linked" && $0.reason == .symbolicLink })
        }
    }

    @Test func remoteNamesAreChecked() throws {
        #expect(try SyncPath(remotePath: "/documents/work/", filename: "a.txt").description == "documents/work/a.txt")
        #expect(try SyncPath(remotePath: nil, filename: "a.txt").description == "a.txt")
        #expect(try SyncPath(remotePath: "/docs", filename: "a.txt").description == "docs/a.txt")
        for (path, filename) in [("/", ".."), ("/../", "a"), ("docs/", "a"), ("/", "a/b"), ("/", "a\u{0}"), ("/", "\u{85}"),
                                 ("/a//b/", "c"), ("/", ""), ("/.cipher-sync/", "x"), ("/", String(repeating: "é", count: 128))] {
            #expect(throws: SyncPathRefusal.self, "\(path) \(filename)") { try SyncPath(remotePath: path, filename: filename) }
        }
        let deep = "/" + String(repeating: "d/", count: 64)
        #expect(throws: SyncPathRefusal.self) { try SyncPath(remotePath: deep, filename: "a") }
    }

    @Test func namesCollideAsOnACaseInsensitiveFileSystem() throws {
        var claims = NameClaims()
        #expect(claims.claim(try SyncPath(relative: "Docs/a.txt")) == nil)
        #expect(claims.claim(try SyncPath(relative: "Docs/a.txt")) == nil)
        #expect(claims.claim(try SyncPath(relative: "docs/b.txt")) == "Docs")
        #expect(claims.claim(try SyncPath(relative: "DOCS/A.TXT")) == "Docs")
        #expect(claims.claim(try SyncPath(relative: "Docs/A.txt")) == "Docs/a.txt")
        // Normalization: a precomposed é and e + combining acute are one name on APFS.
        #expect(claims.claim(try SyncPath(relative: "caf\u{e9}.txt")) == nil)
        #expect(claims.claim(try SyncPath(relative: "cafe\u{301}.txt")) == "caf\u{e9}.txt")
        // A file and a folder of one name.
        #expect(claims.claim(try SyncPath(relative: "docs")) == "Docs")
        #expect(claims.claim(try SyncPath(relative: "x.txt/y")) == nil)
        #expect(claims.claim(try SyncPath(relative: "X.TXT")) == "x.txt")
    }

    @Test func conflictCopyNamesSayWhereAndWhen() throws {
        let path = try SyncPath(relative: "docs/notes.txt")
        #expect(path.inserting(" (conflict from laptop 2026-12-06T061502Z)")?.description
            == "docs/notes (conflict from laptop 2026-12-06T061502Z).txt")
        #expect(try SyncPath(relative: ".profile").inserting(" (c)")?.description == ".profile (c)")
        let long = try SyncPath(relative: String(repeating: "n", count: 250) + ".txt")
        let copy = try #require(long.inserting(" (conflict from laptop 2026-12-06T061502Z)"))
        #expect(copy.filename.utf8.count <= 255 && copy.filename.hasSuffix("Z).txt"))
        #expect(LocalFolder.stamp(Date(timeIntervalSince1970: 1_796_537_702)) == "2026-12-06T061502Z")
    }
}
