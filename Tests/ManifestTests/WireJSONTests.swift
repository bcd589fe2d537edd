import Foundation
import Manifest
import Testing
import OrderedJSON

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
private func parse(_ json: String) throws -> JSONValue { try WireJSON.parse(Array(json.utf8)) }

/// The JSON layer against outputs of CPython 3's `json` module (values printed by
/// `json.dumps`, written down here, not produced by this package).
@Suite("Wire JSON: Python json.loads / json.dumps behaviour")
struct WireJSONTests {
    @Test func floatsAreWrittenLikePythonRepr() throws {
        let values: [Double] = [0.1, 1e16, 1e15, 0.0001, 0.00001, 1.5e-7, 123456789.123, .leastNonzeroMagnitude,
                                1.7976931348623157e308, -0.0, 100.0, 2.5, 1.0 / 3.0, 37.7749, -122.4194, 1e22,
                                123456789012345678.0, 0.000123456]
        let written = WireJSON.serialize(.array(values.map { .number(JSONNumber($0)) }))
        // json.dumps(values, separators=(",", ":")) in CPython 3.11:
        #expect(text(written) == "[0.1,1e+16,1000000000000000.0,0.0001,1e-05,1.5e-07,123456789.123,5e-324,"
            + "1.7976931348623157e+308,-0.0,100.0,2.5,0.3333333333333333,37.7749,-122.4194,1e+22,"
            + "1.2345678901234568e+17,0.000123456]")
    }

    @Test func numbersAreReWrittenAsPythonReadsThem() throws {
        let value = try parse("[1E2, -0, 1e999, -1e999, 10.50, 1e-7, NaN, 12345678901234567890123]")
        // json.dumps(json.loads(...), separators=(",", ":")):
        #expect(text(WireJSON.serialize(value)) == "[100.0,0,Infinity,-Infinity,10.5,1e-07,NaN,12345678901234567890123]")
        // The parsed text itself is kept.
        #expect(value.arrayValue?.first == .number(try #require(JSONNumber(text: "1E2"))))
        #expect(value.arrayValue?[7].intValue == nil)
        #expect(try parse("1795956595.0").intValue == 1_795_956_595)
        #expect(try parse("-Infinity").doubleValue == -.infinity)
    }

    @Test func stringsAreEscapedLikePython() throws {
        let tricky = JSONValue.string("é\u{2028}\n\"\\\u{01}\u{7F}😀/\t")
        // json.dumps(s, ensure_ascii=False) and json.dumps(s):
        #expect(text(WireJSON.serialize(tricky)) == "\"é\u{2028}\\n\\\"\\\\\\u0001\u{7F}😀/\\t\"")
        #expect(text(WireJSON.serialize(tricky, style: .pythonDefault))
            == #""\u00e9\u2028\n\"\\\u0001\u007f\ud83d\ude00/\t""#)
        #expect(try parse(text(WireJSON.serialize(tricky))) == tricky)
        #expect(try parse(#""\ud83d\ude00 \/ \u00E9""#) == .string("😀 / é"))
    }

    @Test func layoutsMatchPython() throws {
        let document: JSONValue = ["alias": nil, "uid": "u-1", "n": [1, 2.0, ["a": []], [:]], "s": "é"]
        // json.dumps(doc, indent=2):
        #expect(text(WireJSON.serialize(document, style: .pythonIndented)) == """
            {
              "alias": null,
              "uid": "u-1",
              "n": [
                1,
                2.0,
                {
                  "a": []
                },
                {}
              ],
              "s": "\\u00e9"
            }
            """)
        // json.dumps(doc):
        #expect(text(WireJSON.serialize(document, style: .pythonDefault))
            == #"{"alias": null, "uid": "u-1", "n": [1, 2.0, {"a": []}, {}], "s": "\u00e9"}"#)
        #expect(text(WireJSON.serialize(document)) == #"{"alias":null,"uid":"u-1","n":[1,2.0,{"a":[]},{}],"s":"é"}"#)
    }

    @Test func objectsKeepDocumentOrderAndPythonDuplicateRule() throws {
        let value = try parse(#"{"zeta":1,"alpha":2,"mid":{"b":1,"a":2},"zeta":3}"#)
        // Python: {'zeta': 3, 'alpha': 2, ...}: last value, first position.
        #expect(value.objectValue?.keys == ["zeta", "alpha", "mid"])
        #expect(value["zeta"] == 3)
        #expect(value["mid"]?.objectValue?.keys == ["b", "a"])
        #expect(text(WireJSON.serialize(value)) == #"{"zeta":3,"alpha":2,"mid":{"b":1,"a":2}}"#)
    }

    @Test func acceptsWhatPythonAccepts() throws {
        #expect(try parse("\u{FEFF} {\"a\" : [ true , false , null ] }\r\n")["a"] == [true, false, nil])
        #expect(try WireJSON.parse([0xEF, 0xBB, 0xBF] + Array("[]".utf8)) == [])
        #expect(try parse("[NaN,Infinity,-Infinity]").arrayValue?.count == 3)
        #expect(try parse("\"\"") == "")
        #expect(try parse("-0.5e+3").doubleValue == -500)
    }

    @Test(arguments: [
        ("", 0), ("[1,]", 3), ("{\"a\":1,}", 7), ("01", 1), ("[1 2]", 3), ("{\"a\" 1}", 5), ("tru", 0),
        ("\"a\u{01}\"", 2), ("\"abc", 0), ("[1]x", 3), ("{'a':1}", 1), ("\"\\x\"", 2),
        ("-", 0), ("1.", 1), ("[", 1), ("{\"a\":", 5), ("nul", 0), ("+1", 0),
    ])
    func rejectsWhatPythonRejects(_ input: String, _ offset: Int) throws {
        let error = #expect(throws: WireFormatError.self) { try parse(input) }
        guard let error, error.isSyntaxError, let at = error.offset, error.limit == nil else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(at == offset, "\(input)")
    }

    /// Python keeps an unpaired surrogate escape as a lone code point; a Swift `String` cannot hold
    /// one, so it reads as U+FFFD, and an escape after a lone high surrogate is read on its own, as
    /// Python reads it.
    @Test(arguments: [
        (#""\ud800x""#, "\u{FFFD}x"), (#""\ud800""#, "\u{FFFD}"), (#""\udc00""#, "\u{FFFD}"),
        (#""\ud800\u0041""#, "\u{FFFD}A"), (#""\udc00\ud83d\ude00""#, "\u{FFFD}😀"),
        (#""\ud800\ud800\udc00""#, "\u{FFFD}\u{10000}"), (#""a\udbff\n""#, "a\u{FFFD}\n"),
    ])
    func unpairedSurrogateEscapesReadAsReplacementCharacters(_ input: String, _ expected: String) throws {
        #expect(try parse(input) == .string(expected))
    }

    @Test func rejectsInvalidUTF8InStrings() {
        #expect(throws: WireFormatError.invalidJSON(offset: 0, reason: "string is not valid UTF-8")) {
            try WireJSON.parse([0x22, 0xC3, 0x28, 0x22])
        }
        #expect(throws: WireFormatError.self) { try WireJSON.parse([0x22, 0x5C, 0x6E, 0xFF, 0x22]) }
    }

    @Test func nestingIsCappedWithoutExhaustingTheStack() throws {
        let depth = WireJSON.maximumDepth
        let deepest = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try parse(deepest).arrayValue != nil)
        let tooDeep = "[" + deepest + "]"
        #expect(throws: WireFormatError.nestingTooDeep(offset: depth, limit: depth)) { try parse(tooDeep) }
        // A hostile 1 MB of brackets fails cleanly.
        #expect(throws: WireFormatError.self) { try WireJSON.parse([UInt8](repeating: UInt8(ascii: "{"), count: 1 << 20)) }
        // The deepest accepted document also survives decoding as metadata and writing back.
        let manifest = #"{"clients":{"a":{"posts":[{"post_cid":"Qm","audience_mode":"self","envelopes_cid":"Qm2","envelopes_count":1,"created_at":1,"metadata":"# + String(repeating: "[", count: depth - 5)
            + String(repeating: "]", count: depth - 5) + "}]}}}"
        let decoded = try Manifest.read(Array(manifest.utf8))
        #expect(try WireJSON.encode(decoded) == Array(manifest.utf8))
    }

    @Test func orderedMapBehavesLikeAPythonDict() {
        var map: OrderedMap<Int> = ["b": 1, "a": 2]
        map["c"] = 3
        map["b"] = 10
        #expect(map.keys == ["b", "a", "c"])
        #expect(map.values == [10, 2, 3])
        #expect(map.removeValue(forKey: "a") == 2)
        #expect(map.index(forKey: "c") == 1)
        map["a"] = 4
        #expect(Array(map.map(\.key)) == ["b", "c", "a"])
        #expect(map != ["c": 3, "b": 10, "a": 4])
        map["c"] = nil
        #expect(map == ["b": 10, "a": 4])
    }

    @Test func typedErrorsNameThePath() throws {
        let body = Array(#"{"clients":{"app":{"posts":[]}},"x":1}"#.utf8)
        #expect(throws: WireFormatError.missingField(path: "uid")) { try WireJSON.decode(StationProfile.self, from: body) }
        let wrong = Array(#"{"uid":5}"#.utf8)
        #expect(throws: WireFormatError.typeMismatch(path: "uid", expected: "a string", found: "a number")) {
            try WireJSON.decode(StationProfile.self, from: wrong)
        }
        #expect(throws: WireFormatError.typeMismatch(path: "", expected: "an object", found: "an array")) {
            try Manifest.read(Array("[]".utf8))
        }
    }

    @Test func foundationCodersInteroperate() throws {
        let profile = try WireJSON.decode(StationProfile.self, from: Array(WireNotes.profile.utf8))
        let viaFoundation = try JSONDecoder().decode(StationProfile.self, from: Data(WireNotes.profile.utf8))
        #expect(viaFoundation.uid == profile.uid)
        #expect(viaFoundation.manifestPostsByClient == profile.manifestPostsByClient)
        let reencoded = try JSONEncoder().encode(profile)
        #expect(try WireJSON.decode(StationProfile.self, from: reencoded) == profile)
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"a":[1,2.5,"x",null,true]}"#.utf8))
        #expect(value["a"] == [1, 2.5, "x", nil, true])
    }

    @Test func orderedMapUpdatesInPlaceAndAppendsNewKeys() {
        var map: OrderedMap<[Int]> = ["a": [1], "b": [2]]
        let count = map.updateValue(forKey: "a", default: []) { values -> Int in
            values.append(3)
            return values.count
        }
        #expect(count == 2 && map["a"] == [1, 3])
        map.updateValue(forKey: "c", default: [9]) { $0.append(10) }
        #expect(map.keys == ["a", "b", "c"] && map["c"] == [9, 10])
        // Past the size at which keys are indexed.
        for number in 0..<20 { map.updateValue(forKey: "k\(number)", default: []) { $0.append(number) } }
        map.updateValue(forKey: "k7", default: []) { $0.append(70) }
        #expect(map.count == 23 && map["k7"] == [7, 70] && map.keys.last == "k19")
    }
}
