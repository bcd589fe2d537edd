import Foundation
@testable import OrderedJSON
import Testing

/// The shortcuts taken on the hot path of a listing give what the general path gives.
@Suite("Fast paths: optional members and ordered maps")
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
