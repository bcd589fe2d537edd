import Foundation
import Manifest
@testable import StationEmulator
import Testing
import OrderedJSON
import ContentAddressing

/// The manifest the emulator assembles from kept per-entry bytes is the document a full
/// `WireJSON.encode(manifest, style: .compact)` writes, whatever the history.
@Suite struct ManifestLedgerTests {
    /// Every view the ledger keeps agrees with the model it holds.
    static func expectConsistent(_ ledger: inout ManifestLedger, _ step: String) throws {
        let full = try WireJSON.encode(ledger.manifest, style: .compact)
        #expect(ledger.document().bytes == full, "document after \(step)")
        for (_, entry) in ledger.manifest.allPosts {
            #expect(ledger.entry(forPostCID: entry.postCID)?.client == ledger.manifest.entry(forPostCID: entry.postCID)?.client)
            #expect(ledger.entry(forPostCID: entry.postCID)?.entry == ledger.manifest.entry(forPostCID: entry.postCID)?.entry)
            #expect(ledger.references(entry.postCID))
            if let envelopes = entry.envelopesCID, !envelopes.isEmpty { #expect(ledger.references(envelopes)) }
        }
    }

    static func entry(_ number: Int, mode: AudienceMode = .all) -> PostEntry {
        .encrypted(postCID: "QmPost\(number)", audienceMode: mode, envelopesCID: "QmEnv\(number)", envelopesCount: 1,
                   createdAt: 1_700_000_000 + number, sealedMetadataHex: number.isMultiple(of: 2) ? "ab\(number)" : nil)
    }

    /// The station's own writes to a manifest (`POST /post`, `/post/delete`), which the ledger wraps.
    @Test func appendAndRemoveFollowTheStation() throws {
        let wireNotes = #"{"clients":{"interop":{"posts":[{"post_cid":"QmVCrQ…","audience_mode":"self","envelopes_cid":"QmY2b5…","envelopes_count":1,"created_at":1795956595,"metadata":"320e7003c48a…(hex)"}]}}}"#
        var manifest = try Manifest.read(Array(wireNotes.utf8))
        let later = PostEntry.encrypted(postCID: "QmB", audienceMode: .all, envelopesCID: "QmE", envelopesCount: 1, createdAt: 2)
        manifest.append(later, toClient: "")
        manifest.append(later, toClient: "interop")
        #expect(manifest.clients.keys == ["interop", "default"])
        #expect(manifest.entry(forPostCID: "QmB")?.client == "interop")
        #expect(manifest.removeEntry(postCID: "QmB", client: "default")?.client == "default")
        #expect(manifest.removeEntry(postCID: "QmB")?.client == "interop")
        #expect(manifest.removeEntry(postCID: "QmB") == nil)
        #expect(manifest.clients["default"]?.posts.isEmpty == true)
    }

    @Test func assembledDocumentMatchesAFullEncodeAcrossCreatesDeletesAndReshares() throws {
        var ledger = ManifestLedger()
        var reference = Manifest()
        try Self.expectConsistent(&ledger, "nothing")
        let namespaces: [String?] = ["drive", nil, "  ", "cipherframe", "na\u{EF}ve \"quoted\"\\\n", "drive"]
        for number in 0..<24 {
            let client = namespaces[number % namespaces.count]
            let entry = number % 5 == 4
                ? PostEntry.publicPost(postCID: "QmPublic\(number)", createdAt: number, metadata: ["name": .string("p\(number) é")])
                : Self.entry(number, mode: number % 3 == 0 ? .specific : .all)
            ledger.append(entry, toClient: client)
            reference.append(entry, toClient: client)
            try Self.expectConsistent(&ledger, "append \(number)")
        }
        // The same post in two namespaces: removals take the first, as the station's do.
        ledger.append(Self.entry(3), toClient: "second")
        reference.append(Self.entry(3), toClient: "second")
        ledger.setProfile(ClientProfile(fields: ["display_name": "Ünïcode", "avatar_cid": "QmAvatar"]), forClient: "cipherframe")
        reference.clients.updateValue(forKey: "cipherframe", default: ClientNamespace()) {
            $0.profile = ClientProfile(fields: ["display_name": "Ünïcode", "avatar_cid": "QmAvatar"])
        }
        ledger.setProfile(ClientProfile(fields: ["bio": "new namespace"]), forClient: "profile only")
        reference.clients.updateValue(forKey: "profile only", default: ClientNamespace()) { $0.profile = ClientProfile(fields: ["bio": "new namespace"]) }
        try Self.expectConsistent(&ledger, "profiles")
        #expect(ledger.references("QmAvatar"))
        #expect(ledger.manifest == reference)

        for (cid, client) in [("QmPost3", nil), ("QmPost3", "second"), ("QmPost0", "drive"), ("QmPublic9", nil), ("QmPost22", "drive"),
                              ("QmMissing", nil), ("QmPost1", "drive")] as [(String, String?)] {
            #expect(ledger.removeEntry(postCID: cid, client: client)?.entry == reference.removeEntry(postCID: cid, client: client)?.entry)
            try Self.expectConsistent(&ledger, "remove \(cid) from \(client ?? "any")")
            // A reshare: removed, then appended again with new envelopes.
            if let (name, old) = ledger.entry(forPostCID: "QmPost\(cid.count)") {
                var reshared = old
                reshared.envelopesCID = "QmReshared\(cid)"
                ledger.removeEntry(postCID: old.postCID, client: name)
                reference.removeEntry(postCID: old.postCID, client: name)
                ledger.append(reshared, toClient: name)
                reference.append(reshared, toClient: name)
                try Self.expectConsistent(&ledger, "reshare after \(cid)")
            }
        }
        #expect(!ledger.references("QmPost3") && !ledger.references("QmEnv3"))

        // `/rewrap_all`: entries replaced in place with new envelopes.
        for (name, namespace) in ledger.manifest.clients {
            for (index, entry) in namespace.posts.enumerated() where entry.audienceMode == .all {
                var rewrapped = entry
                rewrapped.envelopesCID = "QmRewrapped\(index)"
                ledger.replaceEntry(at: index, inClient: name, with: rewrapped)
                reference.clients.updateValue(forKey: name, default: ClientNamespace()) { $0.posts[index] = rewrapped }
            }
        }
        try Self.expectConsistent(&ledger, "rewrap")
        #expect(ledger.manifest == reference)
    }

    @Test func appendsPastSeveralChunksRebuildTheDAGFromWhereTheDocumentChanged() throws {
        var ledger = ManifestLedger()
        var file = UnixFS.RevisedFile()
        ledger.append(Self.entry(0), toClient: "first")
        let padding = String(repeating: "5a", count: 1600)
        for number in 1...600 {
            // Mostly the last namespace; now and then the first, which moves every later byte.
            var entry = Self.entry(number)
            entry.metadata = .sealed(hex: padding + String(number))
            ledger.append(entry, toClient: number.isMultiple(of: 97) ? "first" : "drive")
            if number == 300 { ledger.removeEntry(postCID: "QmPost5", client: nil) }
            let document = ledger.document()
            let revision = file.revise(to: document.bytes, unchangedPrefix: document.unchangedPrefix)
            if number.isMultiple(of: 40) || number.isMultiple(of: 97) || number == 300 {
                #expect(revision.root == UnixFS.cid(of: document.bytes), "after \(number)")
                #expect(document.bytes == (try WireJSON.encode(ledger.manifest, style: .compact)), "after \(number)")
            }
        }
        #expect(ledger.document().bytes.count > 7 * 262_144)
    }

    @Test func legacyAndIrregularEntriesWriteBackAsAFullEncodeDoes() throws {
        // The legacy flat form, legacy `cid`, `all_followers`, a missing and an unknown audience
        // mode, plaintext and non-object metadata, an explicit `encrypted` on a public entry.
        let legacy = #"{"client":"old app","posts":[{"cid":"QmA","audience_mode":"all_followers","envelopes_cid":"QmE"},"#
            + #"{"post_cid":"QmB","envelopes_cid":null,"metadata":7},{"post_cid":"QmC","audience_mode":"public","encrypted":true,"#
            + #""metadata":{"z":1,"a":[true,null]}},{"post_cid":"QmD","audience_mode":{"odd":1},"created_at":5}]}"#
        let manifest = try Manifest.read(Array(legacy.utf8))
        #expect(manifest.wasLegacyFlat && manifest.postCount == 4)
        var ledger = ManifestLedger(manifest)
        try Self.expectConsistent(&ledger, "legacy load")
        ledger.append(Self.entry(1), toClient: "old app")
        ledger.removeEntry(postCID: "QmB", client: nil)
        try Self.expectConsistent(&ledger, "legacy edits")
    }

    @Test func publishedManifestIsTheFullEncodeAfterPostsDeletesAndReshares() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try Harness(dataDirectory: directory)
        let device = try harness.pair()
        func expectPublished(_ step: String) throws {
            let cid = try #require(harness.emulator.core.state.withLock { $0.publicDocument.manifestPointer })
            let bytes = try #require(harness.emulator.block(cid))
            #expect([UInt8](bytes) == (try WireJSON.encode(harness.emulator.manifest, style: .compact)), "after \(step)")
            #expect(UnixFS.cid(of: bytes).description == cid)
            #expect(try harness.profile()["manifest_cid"]?.stringValue == cid)
        }
        var posted: [String] = []
        for (number, client) in ["drive", "interop", "drive", "app é", "interop", "drive"].enumerated() {
            posted.append(try harness.post(device, mode: number == 3 ? "public" : nil, client: client).cid)
            try expectPublished("post \(number)")
        }
        #expect(try harness.signedJSON(device, "/post/delete", ["post_cid": .string(posted[1])]).status == 200)
        try expectPublished("delete")
        #expect(try harness.signedJSON(device, "/post/share", ["post_cid": .string(posted[0]), "audience_mode": "all"]).status == 200)
        try expectPublished("reshare")
        #expect(try harness.signedJSON(device, "/profile/update", ["display_name": "Scale"]).status == 200)
        try expectPublished("profile")
        let manifest = harness.emulator.manifest
        harness.emulator.stop()

        // Reopened, the station reads the manifest back from its block.
        let reopened = try StationEmulator(configuration: .init(dataDirectory: directory))
        #expect(reopened.manifest == manifest)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("pins.json").path))
        #expect(reopened.core.blocks.pinnedRoots == harness.emulator.core.blocks.pinnedRoots)
    }
}
