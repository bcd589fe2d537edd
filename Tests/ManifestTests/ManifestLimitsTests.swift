import Foundation
@testable import Manifest
import OrderedJSON
import Testing

/// `ManifestLimits`: the posts of a manifest counted while it is read, and each post's metadata
/// measured (size and nesting) before it is built, so a hostile station's manifest can neither
/// fill memory with posts nor with one post's metadata.
@Suite("Manifest.read with limits: posts counted, metadata measured while reading")
struct ManifestLimitsTests {
    static func document(_ namespaces: [(String, [String])], tail: String = "}}") -> [UInt8] {
        let clients = namespaces.map { name, posts in #""\#(name)":{"posts":[\#(posts.joined(separator: ","))]}"# }
        return Array((#"{"clients":{"# + clients.joined(separator: ",") + tail).utf8)
    }

    static func post(_ cid: String, metadata: String? = nil) -> String {
        #"{"post_cid":"\#(cid)","audience_mode":"public","encrypted":false"# + (metadata.map { #","metadata":\#($0)"# } ?? "") + "}"
    }

    @Test("The posts of every namespace count together; the read stops at the first one past the limit")
    func postCountStopsTheRead() throws {
        let three = Self.document([("a", [Self.post("Qm1"), Self.post("Qm2")]), ("b", [Self.post("Qm3")])])
        #expect(try Manifest.read(three, limits: ManifestLimits(maximumPosts: 3)).postCount == 3)
        #expect(throws: WireFormatError.limitExceeded(path: "clients.b.posts[0]", limit: 2)) {
            try Manifest.read(three, limits: ManifestLimits(maximumPosts: 2))
        }
        // Bad entries are posts too.
        let bad = Self.document([("a", ["null", #"{"x":1}"#, Self.post("Qm1")])])
        #expect(throws: WireFormatError.limitExceeded(path: "clients.a.posts[2]", limit: 2)) {
            try Manifest.read(bad, limits: ManifestLimits(maximumPosts: 2))
        }
        // Nothing after the post past the limit is read: what follows it is not even JSON.
        let truncated = Array((#"{"clients":{"a":{"posts":[{"post_cid":"Qm1"},{"post_cid":"Qm2"},{"post_cid":"#).utf8)
        let error = #expect(throws: WireFormatError.self) { try Manifest.read(truncated, limits: ManifestLimits(maximumPosts: 1)) }
        #expect(error == .limitExceeded(path: "clients.a.posts[1]", limit: 1))
        #expect(error?.limit == 1 && error?.path == "clients.a.posts[1]" && error?.isSyntaxError == false)
        // The legacy flat form counts too; without limits nothing is counted.
        #expect(throws: WireFormatError.limitExceeded(path: "posts[1]", limit: 1)) {
            try Manifest.read(Array(#"{"posts":[{"post_cid":"Qm1"},{"post_cid":"Qm2"}]}"#.utf8), limits: ManifestLimits(maximumPosts: 1))
        }
        #expect(try Manifest.read(three).postCount == 3)
    }

    @Test("Metadata longer than the size cap skips its post, with an issue naming it; the rest is read")
    func metadataSizeCap() throws {
        let limits = ManifestLimits(maximumPosts: 100, maximumMetadataBytes: 40)
        let fits = #"{"name":"\#(String(repeating: "x", count: 29))"}"#  // 40 bytes
        let object = #"{"name":"\#(String(repeating: "x", count: 30))"}"#  // 41 bytes
        let hex = "\"" + String(repeating: "ab", count: 20) + "\""  // 42 bytes
        let array = "[" + Array(repeating: "[]", count: 20).joined(separator: ",") + "]"
        let bytes = Self.document([("drive", [
            Self.post("QmFits", metadata: fits), Self.post("QmObject", metadata: object), Self.post("QmHex", metadata: hex),
            Self.post("QmArray", metadata: array), Self.post("QmLast", metadata: "\"abcd\""),
        ])])
        let manifest = try Manifest.read(bytes, limits: limits)
        #expect(manifest.posts(in: "drive").map(\.postCID) == ["QmFits", "QmLast"])
        #expect(manifest.issues.map(\.postCID) == ["QmObject", "QmHex", "QmArray"])
        #expect(manifest.issues.map(\.index) == [1, 2, 3])
        #expect(manifest.issues.allSatisfy { $0.reason.contains("more than the 40 allowed") }, "\(manifest.issues)")
        // Unlimited, every post is read with its metadata.
        #expect(try Manifest.read(bytes).posts(in: "drive").count == 5)
    }

    @Test("Metadata nested deeper than the cap skips its post, even past the parser's own cap")
    func metadataDepthCap() throws {
        func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        let limits = ManifestLimits(maximumPosts: 100, maximumMetadataBytes: 1 << 20, maximumMetadataDepth: 32)
        let bytes = Self.document([("drive", [
            Self.post("Qm32", metadata: nested(32)), Self.post("Qm33", metadata: nested(33)),
            Self.post("QmObjects", metadata: String(repeating: #"{"a":"#, count: 33) + "1" + String(repeating: "}", count: 33)),
            Self.post("QmPastParser", metadata: nested(WireJSON.maximumDepth + 100)), Self.post("QmScalar", metadata: "7"),
        ])])
        let manifest = try Manifest.read(bytes, limits: limits)
        #expect(manifest.posts(in: "drive").map(\.postCID) == ["Qm32", "QmScalar"])
        #expect(manifest.posts(in: "drive").first?.metadata == PostMetadata(jsonValue: try WireJSON.parse(Array(nested(32).utf8))))
        #expect(manifest.issues.map(\.postCID) == ["Qm33", "QmObjects", "QmPastParser"])
        #expect(manifest.issues.allSatisfy { $0.reason.contains("deeper than the 32 allowed") }, "\(manifest.issues)")
        // Without limits the parser's cap still fails the whole document, as before.
        #expect(throws: WireFormatError.self) { try Manifest.read(bytes) }
    }

    @Test("A measured value that is not JSON still fails the whole read, as the parser would")
    func measuredValuesAreChecked() {
        let limits = ManifestLimits(maximumPosts: 10)
        for metadata in ["[1,]", "[}", #"{"a" 1}"#, "[\"\u{01}\"]", "[01]", "[tru]", #"{"a":1,}"#] {
            let bytes = Self.document([("drive", [Self.post("Qm1", metadata: metadata)])])
            #expect(throws: WireFormatError.self, "\(metadata)") { try Manifest.read(bytes, limits: limits) }
        }
        // Members an entry ignores are skipped without building them, checked all the same.
        for junk in ["[1,]", String(repeating: "[", count: WireJSON.maximumDepth + 1)] {
            let bytes = Array(#"{"clients":{"a":{"posts":[{"post_cid":"Qm1","junk":\#(junk)}]}}}"#.utf8)
            #expect(throws: WireFormatError.self) { try Manifest.read(bytes, limits: limits) }
            #expect(throws: WireFormatError.self) { try Manifest.read(bytes) }
        }
    }

    @Test("A profile past the metadata caps is left out with an issue; the posts are read")
    func profileCaps() throws {
        let limits = ManifestLimits(maximumPosts: 10, maximumMetadataBytes: 64)
        let bio = String(repeating: "b", count: 100)
        let bytes = Array(#"{"clients":{"a":{"posts":[{"post_cid":"Qm1"}],"profile":{"bio":"\#(bio)"}}}}"#.utf8)
        let manifest = try Manifest.read(bytes, limits: limits)
        #expect(manifest.clients["a"]?.profile == nil && manifest.postCount == 1)
        #expect(manifest.issues.count == 1 && manifest.issues.first?.index == nil)
        #expect(try Manifest.read(bytes).clients["a"]?.profile?.bio == bio)
    }
}
