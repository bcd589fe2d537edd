import Foundation
@testable import Manifest
import Testing
import OrderedJSON

/// `Manifest.read` (the listing's direct reader) gives exactly what the `Decodable` path gives:
/// the same namespaces, entries, profiles, issues (with their texts) and errors.
@Suite("Manifest.read: the direct reader agrees with the Decodable path")
struct ManifestReaderTests {
    /// Keys with escapes or non-ASCII (read through the String path), integers at the edges of the
    /// plain-integer shortcut, and members the reader ignores between known ones: in the
    /// station's form, so the direct reader takes it.
    static let edgeCases = #"{"clients":{"x":{"posts":[{"post\u005fcid":"QmEsc","cr\u0065ated_at":12,"envelopes_count":-7,"é":1,"created_at":999999999999999999},{"post_cid":"Qm2","created_at":1000000000000000000,"envelopes_count":-999999999999999999},{"post_cid":"Qm3","created_at":-1000000000000000000,"envelopes_count":0,"unknown":[{"created_at":1}]},{"post_cid":"Qm4","created_at":-0.0,"envelopes_count":true}]}}}"#

    static let documents: [String] = [
        WireNotes.manifest,
        // A public entry and a profile namespace.
        #"{"clients":{"cipherframe":{"posts":[{"post_cid":"QmTrYb…","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":1795956600,"metadata":{"caption":"hi","width":1920}}],"profile":{"display_name":"Ada","bio":"x","updated_at":1795956601,"avatar_cid":"QmAvatar","account_privacy":"public","default_audience_mode":"public"}},"drive":{"posts":[]}}}"#,
        // Bad entries, a bad profile, bad namespaces and posts values.
        #"{"future_top":true,"clients":{"app":{"posts":[{"post_cid":"Qm1","audience_mode":"followers_of_followers","envelopes_cid":"Qm2","envelopes_count":"many","created_at":"yesterday","audience_uids":["a",7,null,"b"],"metadata":{"k":1},"future":1},{"audience_mode":"all"},"not an entry",{"post_cid":""},{"post_cid":"Qm3","cid":"QmIgnored"},null,[1],{"post_cid":7},{"post_cid":"","cid":"QmLegacy"}],"profile":"oops","future_bucket_key":{}},"broken":42,"nulled":null,"nullposts":{"posts":null},"badposts":{"posts":{"a":1}},"5":{"posts":[3]}}}"#,
        // Lenient fields: other types, nulls, numbers the integer reader accepts or not.
        #"{"clients":{"x":{"posts":[{"post_cid":"Qm1","audience_mode":null,"encrypted":"yes","envelopes_cid":5,"envelopes_count":3.0,"created_at":-0,"audience_uids":null,"metadata":null},{"post_cid":"Qm2","audience_mode":{"a":[1,2]},"encrypted":true,"envelopes_count":1.5,"created_at":1e3,"audience_uids":"a","metadata":[1]},{"post_cid":"Qm3","audience_mode":"public","created_at":-9223372036854775809,"envelopes_count":9223372036854775808,"metadata":"00ff"},{"post_cid":"Qm4","audience_mode":"public","encrypted":true,"created_at":NaN,"envelopes_count":Infinity},{"cid":"QmOld","audience_mode":"all_followers","created_at":1795956595.0,"envelopes_count":-1E2}],"profile":null}}}"#,
        edgeCases,
        // Duplicate keys: the last value wins at the first position.
        #"{"clients":{"a":{"posts":[{"post_cid":"Qm1","post_cid":"Qm9"}]},"b":{"posts":[]},"a":{"posts":[{"post_cid":"Qm2"}]}}}"#,
        // Legacy flat forms.
        #"{"client":"cipherframe","posts":[{"cid":"QmOld","audience_mode":"all_followers","envelopes_cid":"QmEnv","metadata":"abcd"},"bad"]}"#,
        #"{"posts":[{"post_cid":"Qm1"}]}"#,
        #"{"client":"  ","posts":[]}"#,
        #"{"client":7,"posts":"x"}"#,
        #"{"client":"c"}"#,
        #"{"clients":[],"posts":[{"post_cid":"Qm1"}]}"#,
        #"{"clients":null}"#,
        #"{"clients":"x","client":"named"}"#,
        "{}",
        #"{"other":1}"#,
    ]

    @Test(arguments: documents)
    func readsAsTheDecodablePathDoes(document: String) throws {
        let bytes = Array(document.utf8)
        let expected = try WireJSON.decode(Manifest.self, from: bytes)
        let actual = try Manifest.read(bytes)
        #expect(actual == expected)
        #expect(actual.issues == expected.issues)
        #expect(actual.issues.map(\.description) == expected.issues.map(\.description))
        #expect(actual.wasLegacyFlat == expected.wasLegacyFlat)
        #expect(try WireJSON.encode(actual) == WireJSON.encode(expected))
        // Read in place from Data: the same manifest.
        let fromData = try Manifest.read(Data(bytes))
        #expect(fromData == actual && fromData.issues == actual.issues)
    }

    /// Documents that are not manifests fail with the same error either way.
    @Test(arguments: ["[]", "null", "\"manifest\"", "42", "true", "{", #"{"clients":{}} x"#, "", #"{"a":"\ud800"}"#])
    func refusesAsTheDecodablePathDoes(document: String) {
        let bytes = Array(document.utf8)
        let expected = Result { () throws(WireFormatError) in try WireJSON.decode(Manifest.self, from: bytes) }
        let actual = Result { () throws(WireFormatError) in try Manifest.read(bytes) }
        #expect(throws: WireFormatError.self) { try actual.get() }
        #expect(actual == expected)
        #expect(Result { () throws(WireFormatError) in try Manifest.read(Data(bytes)) } == expected)
    }

    /// Documents in the form a station writes take the direct path (no JSON tree), whatever
    /// their layout, and read as the tree gives them.
    @Test(arguments: [
        WireNotes.manifest,
        documents[1],
        edgeCases,
        #"{"clients":{}}"#,
        #"{"clients":{"a":{},"b":{"posts":[]},"c":{"posts":[{}]}}}"#.replacingOccurrences(of: "[{}]", with: #"[{"cid":"QmOld"}]"#),
        "\u{FEFF}" + #" { "future" : [1, {"x": null}] , "clients" : { "drive" : { "profile" : {"bio":"b"} , "posts" : [ { "post_cid" : "Qm1" , "metadata" : {"k":[1,2.50,-0,1e3,"ü"]} } , {"post_cid":"Qm2","post_cid":"Qm3","audience_mode":"self","audience_mode":7,"created_at":12,"extra":{"deep":[[]]}} ] , "profile" : {"bio":"c"} , "other" : "x" } , "b\u00e9" : {"posts":[{"post_cid":"Qm\u0041","audience_uids":["u",1]}]} } } "#,
        #"{"clients":{"x":{"posts":[{"post_cid":"Qm1","audience_mode":null,"encrypted":"yes","envelopes_cid":5,"envelopes_count":3.0,"created_at":-0,"audience_uids":null,"metadata":null},{"post_cid":"Qm2","audience_mode":{"a":[1,2]},"encrypted":true,"envelopes_count":1.5,"created_at":1e3,"audience_uids":"a","metadata":[1]},{"post_cid":"Qm3","audience_mode":"public","created_at":-9223372036854775809,"envelopes_count":9223372036854775808,"metadata":"00ff"},{"post_cid":"Qm4","audience_mode":"public","encrypted":true,"created_at":NaN,"envelopes_count":Infinity},{"cid":"QmOld","audience_mode":"all_followers","created_at":1795956595.0,"envelopes_count":-1E2}],"profile":null}}}"#,
    ])
    func stationFormTakesTheDirectPath(document: String) throws {
        let bytes = Array(document.utf8)
        let direct = try #require(Manifest.readStationForm(bytes))
        let expected = try WireJSON.decode(Manifest.self, from: bytes)
        #expect(direct == expected)
        #expect(direct.issues.isEmpty && expected.issues.isEmpty)
        #expect(try WireJSON.encode(direct) == WireJSON.encode(expected))
    }

    /// Anything else leaves the direct path: it gives no manifest rather than a different one.
    @Test(arguments: Array(documents[2...]).filter { !$0.hasPrefix(#"{"clients":{"x":"#) } + [
        #"{"clients":{"a":{"posts":[]},"a":{"posts":[]}}}"#, #"{"clients":{"a":{"posts":[],"posts":[]}}}"#,
        #"{"clients":{"a":{"posts":[]}},"clients":{}}"#, #"{"clients":{"a":{"profile":7}}}"#,
        #"{"clients":{"a":{"posts":[{"post_cid":"Qm1"},]}}}"#, #"{"clients":{"a":{"posts":[{"post_cid":"Qm1"}]}}} x"#,
        #"{"clients":{"a":{"posts":[{"post_cid":"Qm1"}]}}"#, #"{"clients":{"a":{"posts":[{"post_cid":"Qm1" "x":1}]}}}"#,
    ])
    func otherFormsLeaveTheDirectPath(document: String) {
        #expect(Manifest.readStationForm(Array(document.utf8)) == nil)
    }

    /// The nesting limit counts the same on the direct path: an entry's metadata may reach
    /// ``WireJSON/maximumDepth`` and no further.
    @Test func nestingLimitOnTheDirectPath() throws {
        func document(metadataDepth: Int) -> [UInt8] {
            let metadata = String(repeating: "[", count: metadataDepth) + String(repeating: "]", count: metadataDepth)
            return Array(#"{"clients":{"a":{"posts":[{"post_cid":"Qm1","metadata":\#(metadata)}]}}}"#.utf8)
        }
        let deepest = document(metadataDepth: WireJSON.maximumDepth - 5)
        #expect(try #require(Manifest.readStationForm(deepest)) == WireJSON.decode(Manifest.self, from: deepest))
        let tooDeep = document(metadataDepth: WireJSON.maximumDepth - 4)
        #expect(Manifest.readStationForm(tooDeep) == nil)
        let expected = Result { () throws(WireFormatError) in try WireJSON.decode(Manifest.self, from: tooDeep) }
        #expect(Result { () throws(WireFormatError) in try Manifest.read(tooDeep) } == expected)
        #expect(throws: WireFormatError.nestingTooDeep(offset: 55 + WireJSON.maximumDepth - 5, limit: WireJSON.maximumDepth)) {
            try expected.get()
        }
    }

    /// A large namespace reads entry for entry the same, bad entries included.
    @Test func largeNamespaceReadsTheSame() throws {
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
        let actual = try Manifest.read(bytes)
        #expect(actual == (try WireJSON.decode(Manifest.self, from: bytes)))
        #expect(actual.posts(in: "drive").count == 2_000 - 21 - 21)
        #expect(actual.issues.count == 42)
        #expect(actual.issues.compactMap(\.index) == (0..<2_000).filter { [13, 41].contains($0 % 97) })
    }
}

/// `DriveFileMetadata.read` (the listing's direct reader) gives what the `Decodable` path gives.
@Suite("DriveFileMetadata.read: the direct reader agrees with the Decodable path")
struct DriveFileMetadataReaderTests {
    @Test(arguments: [
        #"{"filename":"a.txt","mime_type":"text/plain","size_bytes":3,"created_at":1700000000,"modified_at":1700000001,"path":"/docs/"}"#,
        #"{"filename":"a.txt"}"#,
        #"{"filename":"","mime_type":null,"size_bytes":null,"created_at":null,"modified_at":null,"path":null}"#,
        #"{"filename":"ü.txt","mime_type":7,"size_bytes":"3","created_at":1.5,"modified_at":1e3,"path":["/"]}"#,
        #"{"filename":"a","size_bytes":3.0,"created_at":-0,"modified_at":9223372036854775808,"future":{"x":1}}"#,
        #"{"filename":"a","size_bytes":-9223372036854775809,"created_at":NaN,"modified_at":-Infinity}"#,
        #"{"path":"/"}"#, #"{"filename":null}"#, #"{"filename":5}"#, #"{"filename":{}}"#,
        "[]", "null", "\"a.txt\"", "3",
    ])
    func readsAsTheDecodablePathDoes(body: String) throws {
        let value = try WireJSON.parse(Array(body.utf8))
        let expected = Result { () throws(WireFormatError) in try WireJSON.decode(DriveFileMetadata.self, from: value) }
        let actual = Result { () throws(WireFormatError) in try DriveFileMetadata.read(value) }
        #expect(actual == expected)
    }

    /// Reading the text directly gives what parsing it and reading the tree gives: the same
    /// metadata, or the same error (the parser's for text that is not JSON).
    @Test(arguments: [
        #"{"filename":"a.txt","mime_type":"text/plain","size_bytes":3,"created_at":1700000000,"modified_at":1700000001,"path":"/docs/"}"#,
        #"{"filename":"ü.txt","mime_type":7,"size_bytes":"3","created_at":1.5,"modified_at":1e3,"path":["/"]}"#,
        #"{"filename":"a","size_bytes":3.0,"created_at":-0,"modified_at":9223372036854775808,"future":{"x":[1,{"y":null}]}}"#,
        #"{"filename":"a","filename":"b","size_bytes":1,"size_bytes":"x"}"#,
        #"{"filename":"a","size_bytes":"x","size_bytes":5,"created_at":999999999999999999,"modified_at":-1000000000000000000}"#,
        #"{"filename":"a","size_bytes":01}"#, #"{"filename":"a","size_bytes":-}"#, #"{"filename":"a","size_bytes":1.}"#,
        #"{"size\u005fbytes":4,"filename":"n","pa\u0074h":"/x","mime_type":"t","é":2}"#,
        #" { "file\u006eame" : "x\"y" , "path" : "/" } "#, "\u{FEFF}{\"filename\":\"bom\"}",
        #"{"path":"/"}"#, #"{"filename":null}"#, #"{}"#, "[]", "null", "\"a.txt\"", "3", "",
        #"{"filename":"a"} x"#, #"{"filename":"a""#, #"{"filename":"a",}"#, #"{"filename" "a"}"#, #"{"filename":"a\x"}"#,
        #"{filename:"a"}"#, #"{"filename":"a","n":[1,2"#, #"{"filename":"a"}}"#, "{\"filename\":\"tab\there\"}",
    ])
    func readsTextAsParsingItDoes(body: String) {
        let bytes = Array(body.utf8)
        let expected = Result { () throws(WireFormatError) in try DriveFileMetadata.read(try WireJSON.parse(bytes)) }
        let actual = Result { () throws(WireFormatError) in try DriveFileMetadata.read(jsonBytes: bytes) }
        #expect(actual == expected)
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
