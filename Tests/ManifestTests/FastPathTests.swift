import Foundation
@testable import Manifest
import Testing

/// The shortcuts taken on the hot path of a listing give what the general path gives.
@Suite("Fast paths: rewrap answers and ordered maps")
struct FastPathTests {
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
