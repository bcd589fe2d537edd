import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing

@Suite("Namespaces: one normalisation on write and read; invalid names refused before any request")
struct NamespaceTests {
    @Test("A client configured with \" notes \" writes and lists `notes`")
    func paddedNamespaceReadsWhatItWrote() async throws {
        let (rig, client) = try await StationRig.pairedInProcess(namespace: " notes ")
        let post = try await client.publish(data: Data("n".utf8), metadata: Fixture.drive("n.txt", size: 1))
        #expect(rig.emulator.manifest.clients.keys == ["notes"])
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [post.postCID])

        // A client configured with the bare name sees the same post; per-call names are normalised too.
        let bare = try await StationClient(credentials: await client.credentials, configuration: rig.configuration(namespace: "notes"))
        #expect(try await bare.listPosts(as: DriveFileMetadata.self).posts.map(\.postCID) == [post.postCID])
        let second = try await bare.publish(data: Data("m".utf8), metadata: Fixture.drive("m.txt", size: 1), namespace: "\tnotes\n")
        #expect(rig.emulator.manifest.posts(in: "notes").map(\.postCID) == [post.postCID, second.postCID])
        _ = try await client.delete(postCID: second.postCID, namespace: "notes  ")
        #expect(rig.emulator.manifest.posts(in: "notes").map(\.postCID) == [post.postCID])
        // The model's lookup normalises the same way.
        #expect(rig.emulator.manifest.posts(in: " notes ").map(\.postCID) == [post.postCID])
    }

    @Test("Blank names and names with control characters are refused before any request", arguments: [
        "", "   ", "\t\n", "no\nlines", "nul\u{0}", "bell\u{7}", "del\u{7F}",
    ])
    func invalidNamespaces(name: String) async throws {
        #expect(throws: StationClientError.self) { try StationClient.normalizedNamespace(name) }
        let (rig, client) = try await StationRig.pairedInProcess()
        let requestsBefore = rig.emulator.requests.entries.count
        for attempt in 0..<3 {
            let error = await #expect(throws: StationClientError.self) {
                switch attempt {
                case 0: _ = try await client.publish(data: Data("x".utf8), metadata: Fixture.drive("x", size: 1), namespace: name)
                case 1: _ = try await client.delete(postCID: "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX", namespace: name)
                default: _ = try await client.reshare(postCID: "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX",
                                                      audience: .selfOnly, namespace: name)
                }
            }
            #expect(error?.kind == .invalidNamespace)
        }
        let configured = try await StationClient(credentials: await client.credentials, configuration: rig.configuration(namespace: name))
        let listing = await #expect(throws: StationClientError.self) { try await configured.listPosts(as: DriveFileMetadata.self) }
        #expect(listing?.kind == .invalidNamespace)
        #expect(rig.emulator.requests.entries.count == requestsBefore)
    }

    @Test("Valid names keep their inner spaces and Unicode", arguments: [("drive", "drive"), (" my notes ", "my notes"),
                                                                         ("ノート", "ノート"), ("\u{A0}café\u{2003}", "café")])
    func validNamespaces(name: String, normalized: String) throws {
        #expect(try StationClient.normalizedNamespace(name) == normalized)
    }
}
