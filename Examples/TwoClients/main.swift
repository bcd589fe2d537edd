import ExampleSupport
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

await runExample { station in
    let drive = try await station.pair(deviceName: "file-app", namespace: "drive")
    let notes = try await station.pair(deviceName: "notes-app", namespace: "notes")

    _ = try await drive.publish(data: Data("pdf".utf8), metadata: DriveFileMetadata(filename: "taxes.pdf"))
    _ = try await notes.publish(data: Data("milk, eggs".utf8), metadata: Note(title: "Shopping", pinned: true))
    _ = try await notes.publish(data: Data("call Ana".utf8), metadata: Note(title: "Todo", pinned: false))

    let manifest = try await drive.fetchManifest(cid: try await drive.profile().manifestCID ?? "")
    for name in manifest.clients.keys { print("manifest namespace \(name): \(manifest.posts(in: name).count) posts") }

    let files = try await drive.listPosts(as: DriveFileMetadata.self)
    print("file app sees: \(files.posts.compactMap { $0.metadata?.filename }.joined(separator: ", "))")
    let notesListing = try await notes.listPosts(as: Note.self)
    print("notes app sees: \(notesListing.posts.compactMap { $0.metadata?.title }.sorted().joined(separator: ", "))")
}
