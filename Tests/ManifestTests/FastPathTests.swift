import Foundation
@testable import Manifest
import Testing

/// The shortcuts taken on the hot path of a listing give what the general path gives.
@Suite("Fast paths: rewrap answers and ordered maps")
struct FastPathTests {
    /// Optional members decode as Foundation's `JSONDecoder` decodes them: missing or `null` is
    /// `nil`, a value of the wrong type throws (the keyed container reads the key once).
    struct Optionals: Decodable, Equatable {
        var text: String?
        var number: Int?
        var wide: Int64?
        var flag: Bool?
        var real: Double?
        var nested: [String]?
    }

    @Test(arguments: [
        #"{}"#,
        #"{"text":null,"number":null,"wide":null,"flag":null,"real":null,"nested":null}"#,
        #"{"text":"t","number":7,"wide":9007199254740993,"flag":true,"real":1.5,"nested":["a"]}"#,
        #"{"text":5}"#, #"{"number":"7"}"#, #"{"number":1.5}"#, #"{"wide":"x"}"#, #"{"flag":0}"#,
        #"{"real":"1"}"#, #"{"nested":"a"}"#, #"{"nested":[1]}"#,
    ])
    func optionalMembersDecodeAsFoundationDoes(body: String) {
        let ours = Result { try WireJSON.decode(Optionals.self, from: Array(body.utf8)) }
        let foundation = Result { try JSONDecoder().decode(Optionals.self, from: Data(body.utf8)) }
        switch (ours, foundation) {
        case (.success(let actual), .success(let expected)): #expect(actual == expected)
        case (.failure, .failure): break
        default: Issue.record("\(body): ours \(ours), Foundation \(foundation)")
        }
    }

    @Test(arguments: [
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"0440ab"}}"#,
        #"{"status":"ok","result":{"error":"post_cid Qm1 not found"}}"#,
        #"{"result":{"error":"no status at all"}}"#,
        #"{"status":7,"result":{"uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"00"}}"#,
        #"{"status":"ok","result":{"error":null,"uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"00"}}"#,
        #"{"status":"ok","result":{"error":5,"uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"00"}}"#,
        #"{"status":"ok","result":{"uid":"u","device_uid":"d","post_cid":"Qm1"}}"#,
        #"{"status":"ok","result":{"uid":"u","device_uid":"d","post_cid":"Qm1","envelope":12}}"#,
        #"{"status":"ok","result":"rewrap_ok"}"#,
        #"{"status":"ok"}"#,
        #"[1,2]"#,
        #"not json"#,
        // Near misses of the station's exact shape, which the compact reader must leave to the parser.
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u\"x","device_uid":"d","post_cid":"Qm1","envelope":"0440"}}"#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"\u00e9","device_uid":"d","post_cid":"Qm1","envelope":"0440"}}"#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"é","device_uid":"d","post_cid":"Qm1","envelope":"0440"}}"#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"0440"}} "#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"0440"}}x"#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"0440"}"#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"0440","error":"x"}}"#,
        #"{"status":"ok", "result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"0440"}}"#,
        #"{"status":"ok","result":{"status":"rewrap_ok","uid":"u","device_uid":"d","post_cid":"Qm1","envelope":"04"#,
    ])
    func rewrapReadMatchesDecoding(body: String) {
        let bytes = Array(body.utf8)
        // The compact reader takes only the station's exact shape.
        #expect((RewrapResponse.readCompact(bytes) != nil) == (body.hasPrefix(#"{"status":"ok","result":{"status":"rewrap_ok""#)
            && body.hasSuffix(#""}}"#) && !body.contains("\\") && !body.contains(#""error""#)))
        let decoded = Result { try WireJSON.decode(RewrapResponse.self, from: bytes) }
        let read = Result { try RewrapResponse.read(bytes) }
        switch (decoded, read) {
        case (.success(let expected), .success(let actual)): #expect(actual == expected)
        case (.failure(let expected), .failure(let actual)): #expect("\(actual)" == "\(expected)")
        default: Issue.record("decode gave \(decoded), read gave \(read)")
        }
    }

    /// Small maps scan their keys; from 13 keys on a hash index takes over. Either way lookups,
    /// replacement, removal and order behave the same.
    @Test(arguments: [5, 12, 13, 40])
    func orderedMapAtAnySize(count: Int) {
        var map = OrderedMap<Int>()
        for index in 0..<count { map["k\(index)"] = index }
        map["k0"] = 100  // replacing keeps the position
        #expect(map.keys == (0..<count).map { "k\($0)" })
        #expect(map["k0"] == 100)
        #expect(map["k\(count - 1)"] == count - 1)
        #expect(map["missing"] == nil)
        #expect(map.removeValue(forKey: "k1") == 1)
        #expect(map.index(forKey: "k2") == 1)
        #expect(!map.contains(key: "k1"))
        map["k1"] = 1
        #expect(map.keys.last == "k1")
        #expect(map.count == count)
        let rebuilt = OrderedMap(map.map { ($0.key, $0.value) })
        #expect(rebuilt == map)
    }

    /// Parsing builds each object and array in place, whatever the nesting.
    @Test func nestedDocumentsParse() throws {
        let text = #"{"a":[1,{"b":[[],{}],"c":"x"},[2,[3]]],"d":{"e":{"f":null}},"a2":true}"#
        let value = try WireJSON.parse(Array(text.utf8))
        #expect(String(decoding: WireJSON.serialize(value), as: UTF8.self) == text)
    }
}
