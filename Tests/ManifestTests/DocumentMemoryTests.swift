import Foundation
@testable import Manifest
@testable import OrderedJSON
import Testing

/// Memory charged by what a document costs, not by its bytes: the shapes of the fourth hostile
/// review (one-member objects, nested objects, empty arrays), each within every byte and depth
/// cap, read without building public metadata and parsed only within a budget.
@Suite("Reading JSON charges what it builds: trees within a budget, public metadata kept as text")
struct DocumentMemoryTests {
    /// `[{"":0},…]`: a one-member object per 7 bytes.
    static func flatObjects(_ count: Int) -> String { "[" + Array(repeating: #"{"":0}"#, count: count).joined(separator: ",") + "]" }

    /// `{"":{"":…0…}}`, `depth` levels.
    static func nestedObjects(_ depth: Int) -> String {
        String(repeating: #"{"":"#, count: depth) + "0" + String(repeating: "}", count: depth)
    }

    /// `[[],…]`.
    static func emptyArrays(_ count: Int) -> String { "[" + Array(repeating: "[]", count: count).joined(separator: ",") + "]" }

    @Test("A document's tree is charged per value; past the limit the parse stops with a typed error naming it")
    func parseIsCharged() throws {
        for shape in [Self.flatObjects(2_000), "[" + Array(repeating: Self.nestedObjects(31), count: 20).joined(separator: ",") + "]",
                      Self.emptyArrays(3_000), "[" + Array(repeating: "[0]", count: 2_000).joined(separator: ",") + "]"] {
            let bytes = Array(shape.utf8)
            var memory = JSONMemoryBudget.unlimited
            let value = try WireJSON.parse(bytes, charging: &memory)
            // Every value was charged, and never more than the bound per byte of the document.
            #expect(memory.used > 0 && memory.used <= JSONMemoryBudget.maximumCostPerByte * bytes.count,
                    "\(memory.used) for \(bytes.count) bytes")
            #expect(WireJSON.serialize(value) == bytes)
            // Half of what it costs is not enough: a typed error naming the limit, no partial tree.
            var half = JSONMemoryBudget(limit: memory.used / 2)
            let error = #expect(throws: WireFormatError.self) { try WireJSON.parse(bytes, charging: &half) }
            #expect(error == .memoryLimitExceeded(limit: memory.used / 2) && error?.limit == memory.used / 2)
            #expect(error?.isSyntaxError == false && error?.description.contains("memory limit of \(memory.used / 2) bytes") == true)
        }
    }

    @Test("One budget spans several documents; the default per-document limit stops a hostile tree")
    func budgetsAreShared() throws {
        let one = Array(Self.flatObjects(100).utf8)
        var once = JSONMemoryBudget.unlimited
        _ = try WireJSON.parse(one, charging: &once)
        var shared = JSONMemoryBudget(limit: once.used * 3)
        for _ in 0..<3 { _ = try WireJSON.parse(one, charging: &shared) }
        #expect(shared.used == once.used * 3)
        #expect(throws: WireFormatError.memoryLimitExceeded(limit: once.used * 3)) { try WireJSON.parse(one, charging: &shared) }
        // 2.3 M one-member objects (16 MiB of text) would build far more than 64 MiB of tree.
        let hostile = Array(Self.flatObjects(2_300_000).utf8)
        #expect(throws: WireFormatError.memoryLimitExceeded(limit: WireJSON.documentMemoryLimit)) { try WireJSON.parse(hostile) }
    }

    @Test("Objects are built at their size: duplicate keys keep the first place and the last value")
    func objectsAreExact() throws {
        let value = try WireJSON.parse(Array(#"{"a":1,"b":{"c":[1,2,{"d":null}]},"a":3}"#.utf8))
        #expect(value == .object(["a": 3, "b": .object(["c": [1, 2, .object(["d": .null])]])]))
        let wide = "{" + (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k7":"x"}"#
        let object = try #require(try WireJSON.parse(Array(wide.utf8)).objectValue)
        #expect(object.count == 40 && object["k7"] == "x" && object.keys[7] == "k7" && object["k39"] == 39)
        // A one-member object and a one-element array hold room for about one, not eight.
        let small = try WireJSON.parse(Array(#"[{"a":[1]}]"#.utf8))
        let member = try #require(small.arrayValue?.first?.objectValue)
        #expect(member.keys.capacity < 4 && member.values.capacity < 4, "\(member.keys.capacity), \(member.values.capacity)")
        #expect((small.arrayValue?.capacity ?? 99) < 4 && (member["a"]?.arrayValue?.capacity ?? 99) < 4)
    }

    @Test("Public metadata is kept as compact text, measured but never built, and parsed on demand")
    func publicMetadataStaysText() throws {
        // As a station's Python writes it (numbers already in its form), with blanks between tokens.
        let metadata = #"{ "filename" : "a b.txt", "tags": [ "x\" y" , 1.5 ] }"#
        let bytes = ManifestLimitsTests.document([("drive", [ManifestLimitsTests.post("QmText", metadata: metadata)])])
        let limits = ManifestLimits(maximumPosts: 10)
        let entry = try #require(try Manifest.read(bytes, limits: limits).posts(in: "drive").first)
        let metadataValue = try #require(entry.metadata)
        #expect(metadataValue.plaintextJSON == Array(#"{"filename":"a b.txt","tags":["x\" y",1.5]}"#.utf8))
        #expect(metadataValue.sealedHex == nil)
        let expected = try WireJSON.parse(Array(#"{"filename":"a b.txt","tags":["x\" y",1.5]}"#.utf8))
        #expect(try metadataValue.jsonValue == expected)
        #expect(try metadataValue.decodePlaintext(as: DriveFileMetadata.self).filename == "a b.txt")
        #expect(metadataValue == .plaintext(try #require(expected.objectValue)))
        // The manifest writes back as before.
        let manifest = try Manifest.read(bytes)
        #expect(try Manifest.read(WireJSON.encode(manifest)) == manifest)
    }

    @Test("A manifest of hostile public metadata holds about its own bytes; past maximumMemory the read stops")
    func hostileManifestIsBounded() throws {
        // 2,000 public posts each with ~3.9 KB of one-member objects 31 deep: within every cap.
        let nested = "[" + Array(repeating: Self.nestedObjects(31), count: 24).joined(separator: ",") + "]"
        #expect(nested.utf8.count < 4_000)
        let posts = (0..<2_000).map { ManifestLimitsTests.post("Qm\($0)", metadata: nested) }
        let bytes = ManifestLimitsTests.document([("drive", posts)])
        let manifest = try Manifest.read(bytes, limits: ManifestLimits(maximumPosts: 10_000))
        #expect(manifest.posts(in: "drive").count == 2_000 && manifest.issues.isEmpty)
        // What the read charges (entries and the text they keep) is within twice the document's size.
        let limits = ManifestLimits(maximumPosts: 10_000, maximumMemory: 2 * bytes.count)
        #expect(try Manifest.read(bytes, limits: limits).postCount == 2_000)
        // A ceiling below what the entries keep stops the read with the typed error naming it.
        let tight = ManifestLimits(maximumPosts: 10_000, maximumMemory: bytes.count / 2)
        #expect(throws: WireFormatError.memoryLimitExceeded(limit: bytes.count / 2)) { try Manifest.read(bytes, limits: tight) }
        // Namespaces cost too: a million tiny ones cannot build a million namespaces for free.
        let namespaces = "{\"clients\":{" + (0..<100_000).map { "\"n\($0)\":1" }.joined(separator: ",") + "}}"
        let few = ManifestLimits(maximumPosts: 10, maximumMemory: 1 << 20)
        #expect(throws: WireFormatError.memoryLimitExceeded(limit: 1 << 20)) { try Manifest.read(Array(namespaces.utf8), limits: few) }
    }

    @Test("A post_cid or envelopes_cid longer than a CID can be is skipped and reported")
    func longCIDsAreSkipped() throws {
        let long = "Qm" + String(repeating: "x", count: 3_600)
        let bytes = ManifestLimitsTests.document([("drive", [
            ManifestLimitsTests.post(long), ManifestLimitsTests.post("QmFine"),
            #"{"post_cid":"QmEnv","envelopes_cid":"\#(long)","metadata":"abcd"}"#,
        ])])
        let manifest = try Manifest.read(bytes, limits: ManifestLimits(maximumPosts: 10))
        #expect(manifest.posts(in: "drive").map(\.postCID) == ["QmFine"])
        try #require(manifest.issues.map(\.index) == [0, 2])
        #expect(manifest.issues[0].reason.contains("longer than the 256"), "\(manifest.issues)")
        #expect(manifest.issues[1].reason.contains("envelopes_cid"), "\(manifest.issues)")
        // A manifest one trusts is read as it is.
        #expect(try Manifest.read(bytes).postCount == 3)
    }
}
