import Foundation
import Manifest
import StationClient
import Testing
@testable import DriveSync

/// Permissions: a new download gets what the umask gives a new file, an executable file arrives
/// executable, and an update keeps the local file's permissions.
@Suite("File modes")
struct FileModeTests {
    static func mode(_ device: SyncRig.Device, _ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: device.folder.appendingPathComponent(path).path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o7777
    }

    static func setMode(_ device: SyncRig.Device, _ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: device.folder.appendingPathComponent(path).path)
    }

    /// The process's umask (set and put back: the tests run one at a time).
    static func currentUmask() -> Int {
        let mask = umask(0o022)
        umask(mask)
        return Int(mask)
    }

    @Test func downloadsGetTheUmasksModeTheExecutableBitAndUpdatesKeepTheLocalMode() async throws {
        try await SyncRig.with { rig in
            let mask = Self.currentUmask()
            try rig.laptop.write("notes.txt", "notes")
            try rig.laptop.write("bin/run.sh", "#!/bin/sh\necho hi\n")
            try Self.setMode(rig.laptop, "notes.txt", 0o600)
            try Self.setMode(rig.laptop, "bin/run.sh", 0o700)
            try await rig.laptop.syncExpectingSuccess()
            let executable = try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts
                .reduce(into: [String: Bool?]()) { $0[$1.metadata?.filename ?? "?"] = $1.metadata?.executable }
            #expect(executable == ["notes.txt": false, "run.sh": true])

            try await rig.phone.syncExpectingSuccess()
            // Not the laptop's modes: what a new file gets here.
            #expect(try Self.mode(rig.phone, "notes.txt") == 0o666 & ~mask)
            #expect(try Self.mode(rig.phone, "bin/run.sh") == 0o777 & ~mask)

            // The phone's own mode survives an edit made on the laptop.
            try Self.setMode(rig.phone, "notes.txt", 0o640)
            try rig.laptop.write("notes.txt", "notes, edited")
            try await rig.laptop.syncExpectingSuccess()
            try await rig.phone.syncExpectingSuccess()
            #expect(try rig.phone.read("notes.txt") == "notes, edited")
            #expect(try Self.mode(rig.phone, "notes.txt") == 0o640)
            _ = try await rig.converge()
        }
    }
}
