import Foundation
import Manifest
import StationClient

// Step 6 of the seed guide: two clients side by side in one manifest.
//
// One station identity hosts many client namespaces. A file app writes "drive", a notes app
// "notes"; each reads only its own, though both live in the same manifest.

/// The notes app's own metadata type: any Codable works outside "drive".
struct Note: Codable, Sendable {
    var title: String
    var pinned: Bool
}

enum TwoClients {
    static let usage = ExampleUsage(name: "two-clients", summary: """
        Two apps, a file app ("drive") and a notes app ("notes"), publish side by side in one
        manifest and each lists only its own namespace; removes the posts at the end.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let drive = try await station.pair(deviceName: "file-app", namespace: "drive")
            let notes = try await station.pair(deviceName: "notes-app", namespace: "notes")

            // A namespace is created by its first post; the protocol has no call to remove one.
            var existing: [String] = []
            if let cid = try await drive.profile().manifestCID { existing = Array(try await drive.fetchManifest(cid: cid).clients.keys) }
            for name in ["drive", "notes"] where !existing.contains(name) {
                station.noteLeftBehind("namespace \(name), empty (the protocol has no call to remove a namespace)")
            }
            station.removeAtEnd(try await drive.publish(data: Data("pdf".utf8), metadata: DriveFileMetadata(filename: "taxes.pdf")),
                                publishedBy: drive, name: "taxes.pdf")
            station.removeAtEnd(try await notes.publish(data: Data("milk, eggs".utf8), metadata: Note(title: "Shopping", pinned: true)),
                                publishedBy: notes, name: "Shopping")
            station.removeAtEnd(try await notes.publish(data: Data("call Ana".utf8), metadata: Note(title: "Todo", pinned: false)),
                                publishedBy: notes, name: "Todo")

            let manifest = try await drive.fetchManifest(cid: try await drive.profile().manifestCID ?? "")
            for name in manifest.clients.keys { print("manifest namespace \(name): \(manifest.posts(in: name).count) posts") }

            let files = try await drive.listPosts(as: DriveFileMetadata.self)
            print("file app sees: \(files.posts.compactMap { $0.metadata?.filename }.joined(separator: ", "))")
            let notesListing = try await notes.listPosts(as: Note.self)
            print("notes app sees: \(notesListing.posts.compactMap { $0.metadata?.title }.sorted().joined(separator: ", "))")
        }
    }
}
