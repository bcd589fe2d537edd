import Foundation
@testable import Manifest
import Testing
@testable import OrderedJSON

/// `Manifest.read` on the documents stations write and have
/// written: the station's form read back byte for byte, the legacy flat forms, bad entries,
/// namespaces and profiles skipped with an issue, and documents that are not manifests refused.
@Suite("Manifest.read: reading a manifest")
struct ManifestReaderTests {
    /// Documents in the station's form (any layout) read without issues and write back as the
    /// station wrote them.
    @Test(arguments: [
        WireNotes.manifest,
        #"{"clients":{"cipherframe":{"posts":[{"post_cid":"QmTrYb…","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":1795956600,"metadata":{"caption":"hi","width":1920}}],"profile":{"display_name":"Ada","bio":"x","updated_at":1795956601,"avatar_cid":"QmAvatar","account_privacy":"public","default_audience_mode":"public"}},"drive":{"posts":[]}}}"#,
        #"{"clients":{}}"#,
    ])
    func stationFormReadsBackByteForByte(document: String) throws {
        let bytes = Array(document.utf8)
        let manifest = try Manifest.read(bytes)
        #expect(manifest.issues.isEmpty && !manifest.wasLegacyFlat)
        #expect(try WireJSON.encode(manifest) == bytes)
        // Read in place from Data: the same manifest.
        #expect(try Manifest.read(Data(bytes)) == manifest)
    }

    @Test func layoutEscapesAndUnknownMembersDoNotMatter() throws {
        let document = "\u{FEFF}" + #" { "future" : [1, {"x": null}] , "clients" : { "drive" : { "profile" : {"bio":"b"} , "posts" : [ { "post_cid" : "Qm1" , "metadata" : {"k":[1,2.50,-0,1e3,"ü"]} } , {"post\u005fcid":"Qm2","cr\u0065ated_at":12,"audience_mode":"self","extra":{"deep":[[]]}} ] , "other" : "x" } , "b\u00e9" : {"posts":[{"post_cid":"Qm\u0041","audience_uids":["u",1]}]} } } "#
        let manifest = try Manifest.read(Array(document.utf8))
        #expect(manifest.issues.isEmpty)
        #expect(manifest.clients.keys == ["drive", "bé"])
        #expect(manifest.posts(in: "drive").map(\.postCID) == ["Qm1", "Qm2"])
        #expect(manifest.posts(in: "drive").last?.createdAt == 12)
        #expect(manifest.posts(in: "drive").last?.audienceMode == .selfOnly)
        #expect(manifest.clients["drive"]?.profile?.bio == "b")
        #expect(manifest.posts(in: "bé").first?.postCID == "QmA")
        #expect(manifest.posts(in: "bé").first?.audienceUIDs == ["u"])
    }

    @Test func integersReadLeniently() throws {
        let document = #"{"clients":{"x":{"posts":[{"post_cid":"Q1","created_at":999999999999999999,"envelopes_count":-7},{"post_cid":"Q2","created_at":3.0,"envelopes_count":1.5},{"post_cid":"Q3","created_at":-0,"envelopes_count":"many"},{"post_cid":"Q4","created_at":9223372036854775808,"envelopes_count":true},{"post_cid":"Q5","created_at":1e3,"envelopes_count":-1E2}]}}}"#
        let posts = try Manifest.read(Array(document.utf8)).posts(in: "x")
        // A time no calendar date has (past the year 9999) and a negative count read as absent.
        #expect(posts.map(\.createdAt) == [nil, 3, 0, nil, 1000])
        #expect(posts.map(\.envelopesCount) == [nil, nil, nil, nil, nil])
    }

    @Test func badEntriesNamespacesAndProfilesAreSkippedWithAnIssue() throws {
        let document = #"{"clients":{"app":{"posts":[{"post_cid":"Qm1","audience_mode":"followers_of_followers","encrypted":"yes","envelopes_cid":5,"metadata":null},{"audience_mode":"all"},"not an entry",{"post_cid":""},{"post_cid":"Qm3","cid":"QmIgnored"},null,[1],{"post_cid":7},{"post_cid":"","cid":"QmLegacy"}],"profile":"oops"},"broken":42,"nulled":null,"nullposts":{"posts":null},"badposts":{"posts":{"a":1}}}}"#
        let manifest = try Manifest.read(Array(document.utf8))
        #expect(manifest.clients.keys == ["app", "broken", "nulled", "nullposts", "badposts"])
        let posts = manifest.posts(in: "app")
        #expect(posts.map(\.postCID) == ["Qm1", "Qm3", "QmLegacy"])
        #expect(posts[0].audienceMode == .unknown("followers_of_followers") && posts[0].isEncrypted)
        #expect(posts[0].envelopesCID == nil && posts[0].metadata == nil)
        #expect(manifest.issues.map(\.description) == [
            "clients.app.posts[1]: missing field clients.app.posts[1].post_cid",
            "clients.app.posts[2]: clients.app.posts[2] should be an object, found a string",
            "clients.app.posts[3]: invalid clients.app.posts[3].post_cid: post_cid is not a non-empty string",
            "clients.app.posts[5]: clients.app.posts[5] should be an object, found null",
            "clients.app.posts[6]: clients.app.posts[6] should be an object, found an array",
            "clients.app.posts[7]: invalid clients.app.posts[7].post_cid: post_cid is not a non-empty string",
            "clients.app: profile is not an object",
            "clients.broken: namespace is not an object",
            "clients.nulled: namespace is not an object",
            "clients.badposts: posts is not an array",
        ])
    }

    @Test func repeatedKeysKeepTheLastValueAtTheFirstPlace() throws {
        let document = #"{"clients":{"a":{"posts":[{"post_cid":"Qm1","post_cid":"Qm9"}]},"b":{"posts":[]},"a":{"posts":[{"post_cid":"Qm2"}],"posts":[{"post_cid":"Qm3"}]}}}"#
        let manifest = try Manifest.read(Array(document.utf8))
        #expect(manifest.clients.keys == ["a", "b"])
        #expect(manifest.posts(in: "a").map(\.postCID) == ["Qm3"])
        let clientsTwice = try Manifest.read(Array(#"{"clients":{"a":{"posts":[]}},"clients":{"z":{}}}"#.utf8))
        #expect(clientsTwice.clients.keys == ["z"])
    }

    @Test func legacyFlatForms() throws {
        let named = try Manifest.read(Array(#"{"client":"cipherframe","posts":[{"cid":"QmOld","audience_mode":"all_followers","envelopes_cid":"QmEnv","metadata":"abcd"},"bad"]}"#.utf8))
        #expect(named.wasLegacyFlat && named.clients.keys == ["cipherframe"])
        #expect(named.posts(in: "cipherframe").map(\.postCID) == ["QmOld"])
        #expect(named.posts(in: "cipherframe").first?.audienceMode == .all)
        #expect(named.issues.map(\.description) == ["clients.cipherframe.posts[1]: posts[1] should be an object, found a string"])

        // Posts after the name, a blank or non-string name, posts that are not an array, no posts.
        let after = try Manifest.read(Array(#"{"posts":[{"post_cid":"Qm1"}],"client":"c"}"#.utf8))
        #expect(after.clients.keys == ["c"] && after.postCount == 1)
        #expect(try Manifest.read(Array(#"{"posts":[{"post_cid":"Qm1"}]}"#.utf8)).clients.keys == ["default"])
        #expect(try Manifest.read(Array(#"{"client":"  ","posts":[]}"#.utf8)).clients.keys == ["default"])
        let odd = try Manifest.read(Array(#"{"client":7,"posts":"x"}"#.utf8))
        #expect(odd.wasLegacyFlat && odd.clients.keys == ["default"])
        #expect(odd.issues.map(\.description) == ["clients.default: posts is not an array"])
        let nameOnly = try Manifest.read(Array(#"{"client":"c"}"#.utf8))
        #expect(nameOnly.wasLegacyFlat && nameOnly.clients.keys == ["c"] && nameOnly.postCount == 0)

        // A `clients` that is not an object: an issue, and the flat members if any.
        let both = try Manifest.read(Array(#"{"clients":[],"posts":[{"post_cid":"Qm1"}]}"#.utf8))
        #expect(both.wasLegacyFlat && both.posts(in: "default").count == 1)
        #expect(both.issues.map(\.description) == ["manifest: clients is not an object"])
        let nulled = try Manifest.read(Array(#"{"clients":null}"#.utf8))
        #expect(!nulled.wasLegacyFlat && nulled.clients.isEmpty && nulled.issues.count == 1)
        #expect(try Manifest.read(Array("{}".utf8)).clients.isEmpty)
        #expect(try Manifest.read(Array(#"{"other":1}"#.utf8)).issues.isEmpty)
    }

    /// Documents that are not manifests (or not JSON) fail the whole read.
    @Test(arguments: ["[]", "null", "\"manifest\"", "42", "true", "{", #"{"clients":{}} x"#, "",
                      #"{"clients":{"a":{"posts":[{"post_cid":"Qm1"},]}}}"#, #"{"clients":{"a":{"posts":[{"post_cid":"Qm1"}]}}"#,
                      #"{"clients":{"a":{"posts":[{"post_cid":"Qm1" "x":1}]}}}"#, #"{"clients":{"a":{"posts":[nul]}}}"#])
    func refusesWhatIsNotAManifest(document: String) {
        let bytes = Array(document.utf8)
        let error = #expect(throws: WireFormatError.self) { try Manifest.read(bytes) }
        #expect(throws: WireFormatError.self) { try Manifest.read(Data(bytes)) }
        // JSON that is not an object is named; anything else is the parser's error, as for any JSON.
        if let value = try? WireJSON.parse(bytes) {
            #expect(error == .typeMismatch(path: "", expected: "an object", found: value.kindName))
        } else {
            #expect(DriveFileMetadataReaderTests.isSyntax(error))
        }
    }

    /// An entry's metadata may reach ``WireJSON/maximumDepth`` and no further.
    @Test func nestingLimit() throws {
        func document(metadataDepth: Int) -> [UInt8] {
            let metadata = String(repeating: "[", count: metadataDepth) + String(repeating: "]", count: metadataDepth)
            return Array(#"{"clients":{"a":{"posts":[{"post_cid":"Qm1","metadata":\#(metadata)}]}}}"#.utf8)
        }
        #expect(try Manifest.read(document(metadataDepth: WireJSON.maximumDepth - 5)).postCount == 1)
        #expect(throws: WireFormatError.nestingTooDeep(offset: 55 + WireJSON.maximumDepth - 5, limit: WireJSON.maximumDepth)) {
            try Manifest.read(document(metadataDepth: WireJSON.maximumDepth - 4))
        }
    }

    /// A large namespace reads entry for entry, its bad entries skipped with their index.
    @Test func largeNamespaceSkipsOnlyTheBadEntries() throws {
        var entries: [String] = []
        for index in 0..<2_000 {
            switch index % 97 {
            case 13: entries.append(#"{"audience_mode":"all"}"#)
            case 41: entries.append("null")
            default:
                entries.append(#"{"post_cid":"Qm\#(index)","audience_mode":"all","envelopes_cid":"QmE\#(index)","envelopes_count":1,"created_at":\#(1_795_956_595 + index),"metadata":"\#(String(repeating: "ab", count: index % 50))"}"#)
            }
        }
        let bytes = Array((#"{"clients":{"drive":{"posts":["# + entries.joined(separator: ",") + "]}}}").utf8)
        let manifest = try Manifest.read(bytes)
        let bad = (0..<2_000).filter { [13, 41].contains($0 % 97) }
        #expect(manifest.posts(in: "drive").map(\.postCID) == (0..<2_000).filter { !bad.contains($0) }.map { "Qm\($0)" })
        #expect(manifest.posts(in: "drive").last?.createdAt == 1_795_956_595 + 1_999)
        #expect(manifest.issues.compactMap(\.index) == bad)
    }
}

/// `DriveFileMetadata.read(jsonBytes:)`, which reads drive metadata (its `Decodable`
/// conformance goes through it).
@Suite("DriveFileMetadata.read: reading drive metadata")
struct DriveFileMetadataReaderTests {
    @Test func readsEveryFieldAndToleratesTheWrongTypes() throws {
        func read(_ text: String) throws -> DriveFileMetadata { try DriveFileMetadata.read(jsonBytes: Array(text.utf8)) }
        #expect(try read(#"{"filename":"a.txt","mime_type":"text/plain","size_bytes":3,"created_at":1700000000,"modified_at":1700000001,"path":"/docs/"}"#)
                == DriveFileMetadata(filename: "a.txt", mimeType: "text/plain", sizeBytes: 3, createdAt: 1_700_000_000,
                                     modifiedAt: 1_700_000_001, path: "/docs/"))
        #expect(try read(#"{"filename":"ü.txt","mime_type":7,"size_bytes":"3","created_at":1.5,"modified_at":1e3,"path":["/"]}"#)
                == DriveFileMetadata(filename: "ü.txt", modifiedAt: 1000))
        #expect(try read(#"{"filename":"a","size_bytes":3.0,"created_at":-0,"modified_at":9223372036854775808,"future":{"x":[1,{"y":null}]}}"#)
                == DriveFileMetadata(filename: "a", sizeBytes: 3, createdAt: 0))
        // The last of a repeated key; escapes in keys; a byte-order mark and blanks around.
        #expect(try read(#"{"filename":"a","filename":"b","size_bytes":"x","size_bytes":5}"#) == DriveFileMetadata(filename: "b", sizeBytes: 5))
        #expect(try read(#" { "file\u006eame" : "x\"y" , "pa\u0074h" : "/" } "#) == DriveFileMetadata(filename: "x\"y", path: "/"))
        #expect(try read("\u{FEFF}{\"filename\":\"bom\"}").filename == "bom")
    }

    /// DriveSync's two fields, and values no file can have, which read as absent (so a hostile
    /// post's dates cannot trap a formatter, nor its digest name another file's content).
    @Test func readsTheDigestAndAncestryAndDropsImpossibleValues() throws {
        func read(_ text: String) throws -> DriveFileMetadata { try DriveFileMetadata.read(jsonBytes: Array(text.utf8)) }
        let digest = String(repeating: "ab", count: 32)
        let metadata = try read(#"{"filename":"a","sha256":"\#(digest.uppercased())","replaces":"bafkreiabc123"}"#)
        #expect(metadata.sha256 == digest && metadata.replaces == "bafkreiabc123" && metadata.executable == nil)
        #expect(try read(#"{"filename":"a","executable":true}"#).executable == true)
        #expect(try read(#"{"filename":"a","executable":false}"#).executable == false)
        for value in [#""true""#, "1", "null", "[]"] {
            #expect(try read(#"{"filename":"a","executable":\#(value)}"#) == DriveFileMetadata(filename: "a"), "\(value)")
        }
        #expect(try read(#"{"filename":"a","sha256":"\#(digest.dropLast())","replaces":"../etc"}"#) == DriveFileMetadata(filename: "a"))
        #expect(try read(#"{"filename":"a","sha256":"\#(digest.dropLast())g","replaces":""}"#) == DriveFileMetadata(filename: "a"))
        #expect(try read(#"{"filename":"a","size_bytes":-1,"created_at":9223372036854775807,"modified_at":-9223372036854775808}"#)
                == DriveFileMetadata(filename: "a"))
        #expect(try read(#"{"filename":"a","created_at":253402300799,"modified_at":-62135596800}"#)
                == DriveFileMetadata(filename: "a", createdAt: 253_402_300_799, modifiedAt: -62_135_596_800))
        #expect(try read(#"{"filename":"a","created_at":253402300800,"modified_at":-62135596801}"#) == DriveFileMetadata(filename: "a"))
        // Written after `path`, left out when absent.
        let written = String(decoding: try JSONEncoder().encode(DriveFileMetadata(filename: "a", path: "/", sha256: digest, replaces: "Qm1")),
                             as: UTF8.self)
        #expect(written.contains(#""sha256":"\#(digest)""#) && written.contains(#""replaces":"Qm1""#))
        let unwritten = String(decoding: try JSONEncoder().encode(DriveFileMetadata(filename: "a")), as: UTF8.self)
        #expect(!unwritten.contains("sha256") && !unwritten.contains("executable"))
        let executable = try JSONEncoder().encode(DriveFileMetadata(filename: "a", replaces: "Qm1", executable: true))
        #expect(String(decoding: executable, as: UTF8.self).contains(#""executable":true"#))
        #expect(try JSONDecoder().decode(DriveFileMetadata.self, from: executable).executable == true)
    }

    @Test func refusesWhatIsNotDriveMetadata() {
        func read(_ text: String) throws(WireFormatError) -> DriveFileMetadata { try DriveFileMetadata.read(jsonBytes: Array(text.utf8)) }
        #expect(throws: WireFormatError.missingField(path: "filename")) { try read(#"{"path":"/"}"#) }
        #expect(throws: WireFormatError.typeMismatch(path: "filename", expected: "a string", found: "null")) { try read(#"{"filename":null}"#) }
        #expect(throws: WireFormatError.typeMismatch(path: "", expected: "an object", found: "an array")) { try read("[]") }
        #expect(throws: WireFormatError.typeMismatch(path: "", expected: "an object", found: "a string")) { try read("\"a.txt\"") }
        for text in ["", #"{"filename":"a"} x"#, #"{"filename":"a""#, #"{"filename":"a",}"#, #"{"filename" "a"}"#,
                     #"{filename:"a"}"#, #"{"filename":"a","n":[1,2"#, #"{"filename":"a","size_bytes":01}"#] {
            let error = #expect(throws: WireFormatError.self, "\(text)") { try read(text) }
            #expect(DriveFileMetadataReaderTests.isSyntax(error), "\(text): \(String(describing: error))")
        }
    }

    static func isSyntax(_ error: WireFormatError?) -> Bool {
        error?.isSyntaxError == true
    }

    /// `Decodable` (for a foreign decoder, or `WireJSON.decode`) gives what the reader gives.
    @Test func decodableGoesThroughTheReader() throws {
        let text = #"{"filename":"a","size_bytes":"x","created_at":2,"extra":[1]}"#
        let expected = try DriveFileMetadata.read(jsonBytes: Array(text.utf8))
        #expect(try WireJSON.decode(DriveFileMetadata.self, from: Array(text.utf8)) == expected)
        #expect(try JSONDecoder().decode(DriveFileMetadata.self, from: Data(text.utf8)) == expected)
        #expect(throws: WireFormatError.missingField(path: "filename")) { try WireJSON.decode(DriveFileMetadata.self, from: Array("{}".utf8)) }
    }
}

/// The parser's ASCII shortcut and its UTF-8 path read strings alike, and invalid UTF-8 is still refused.
@Suite("JSON strings: ASCII shortcut and UTF-8 validation")
struct JSONStringFastPathTests {
    @Test func asciiAndUTF8StringsRead() throws {
        let text = #"{"a":"plain","b":"ünïcødé €","c":"","d":"mixed \u00e9 and é","e":"QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4"}"#
        let value = try WireJSON.parse(Array(text.utf8))
        #expect(value["a"] == "plain" && value["b"] == "ünïcødé €" && value["c"] == "")
        #expect(value["d"] == "mixed é and é")
        #expect(value["e"] == "QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4")
    }

    @Test(arguments: [[0x80], [0xC3], [0xED, 0xA0, 0x80], [0x61, 0xFF, 0x62], [0xC0, 0xAF]] as [[UInt8]])
    func invalidUTF8IsRefused(inner: [UInt8]) {
        let bytes = Array(#"{"k":""#.utf8) + inner + Array(#""}"#.utf8)
        #expect(throws: WireFormatError.self) { try WireJSON.parse(bytes) }
        // In a key too.
        let key = Array(#"{""#.utf8) + inner + Array(#"":1}"#.utf8)
        #expect(throws: WireFormatError.self) { try WireJSON.parse(key) }
    }

    /// The eight-byte scan flags exactly the words with a quote, a backslash, a control or a non-ASCII byte.
    @Test func wordScanFlagsWhatTheByteLoopWouldStopAt() {
        func plain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C }
        func word(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[position] = UInt8(value)
                #expect(JSONParser.isPlainASCII(word(bytes)) == plain(UInt8(value)), "byte \(value) at \(position)")
            }
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            // Mostly printable bytes, so that words without any flagged byte are common.
            let bytes = (0..<8).map { i -> UInt8 in
                let r = UInt8(truncatingIfNeeded: state >> (i * 8))
                return r % 5 == 0 ? r : 0x20 + r % 0x5F
            }
            #expect(JSONParser.isPlainASCII(word(bytes)) == bytes.allSatisfy(plain))
        }
    }

    /// The sixteen-byte scan flags a pair of words exactly when either word is flagged alone.
    @Test func pairScanFlagsWhatEitherWordWould() {
        func plain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C }
        func words(_ bytes: [UInt8]) -> (UInt64, UInt64) {
            bytes.withUnsafeBytes { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
        }
        for position in 0..<16 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "Q"), count: 16)
                bytes[position] = UInt8(value)
                let (first, second) = words(bytes)
                #expect(JSONParser.isPlainASCII(first, second) == plain(UInt8(value)), "byte \(value) at \(position)")
            }
        }
    }

    /// Long strings with escapes, controls and non-ASCII bytes at every offset read as the byte loop reads them.
    @Test func longStringsReadAlikeAtEveryOffset() throws {
        // Past two 16-byte steps and an 8-byte one, so every stage of the scan meets each byte.
        for offset in 0..<44 {
            for inner in ["\\\"", "\\\\", "\\u00e9", "é", "€"] {
                let text = String(repeating: "0123456789abcdef", count: 3)
                let index = text.index(text.startIndex, offsetBy: offset)
                let raw = String(text[..<index]) + inner + String(text[index...])
                let value = try WireJSON.parse(Array("\"\(raw)\"".utf8))
                let expected = String(text[..<index]) + ["\\\"": "\"", "\\\\": "\\", "\\u00e9": "é"][inner, default: inner]
                    + String(text[index...])
                #expect(value == .string(expected))
            }
            let control = Array("\"\(String(repeating: "x", count: offset))".utf8) + [0x0A] + Array("yyyyyyyyyy\"".utf8)
            #expect(throws: WireFormatError.self) { try WireJSON.parse(control) }
        }
    }

    /// `Data` is parsed in place, with the same result and errors as its bytes.
    @Test func dataParsesAsItsBytes() throws {
        let text = #"{"filename":"a.txt","n":[1,2.5,"x"]}"#
        #expect(try WireJSON.parse(Data(text.utf8)) == WireJSON.parse(Array(text.utf8)))
        let bad = Data(#"{"a":1"#.utf8)
        let dataError = Result { () throws(WireFormatError) in try WireJSON.parse(bad) }
        let arrayError = Result { () throws(WireFormatError) in try WireJSON.parse([UInt8](bad)) }
        #expect(dataError == arrayError)
        #expect(throws: WireFormatError.self) { try dataError.get() }
    }
}
