import Foundation
import PQCrypto
import TestSupport
import Testing

/// Round trips with kyber-py, the ML-KEM implementation real stations run.
@Suite("ML-KEM-768 interop with kyber-py",
       .enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
struct MLKEMInteropTests {
    struct GenerateRequest: Encodable { let op = "generate"; let swift_eks: [String] }
    struct GenerateResponse: Decodable {
        let py_keys: [PythonKey]
        let to_swift: [Encapsulation]
        struct PythonKey: Decodable { let ek: String; let dk: String; let c: String; let k: String }
        struct Encapsulation: Decodable { let c: String; let k: String }
    }
    struct DecapsulateRequest: Encodable { let op = "decapsulate"; let items: [Item]; struct Item: Encodable { let dk: String; let c: String } }

    @Test func roundTripsBothWays() throws {
        let count = 200
        let swiftKeys = (0..<count).map { _ in MLKEM768.PrivateKey() }
        let generated = try InteropPython.call(
            "mlkem_interop.py", GenerateRequest(swift_eks: swiftKeys.map { $0.publicKey.rawRepresentation.hex }),
            as: GenerateResponse.self)
        try #require(generated.to_swift.count == count && generated.py_keys.count == count)

        // kyber-py encapsulates to Swift keys; Swift decapsulates.
        for (key, encapsulation) in zip(swiftKeys, generated.to_swift) {
            #expect(try key.decapsulate(try [UInt8](hex: encapsulation.c)).hex == encapsulation.k)
        }
        // Keys loaded from kyber-py's 2400-byte dk decapsulate kyber-py's ciphertexts.
        var items = [DecapsulateRequest.Item]()
        var expected = [String]()
        for pythonKey in generated.py_keys {
            let loaded = try MLKEM768.PrivateKey(expandedRepresentation: try [UInt8](hex: pythonKey.dk))
            #expect(loaded.publicKey.rawRepresentation.hex == pythonKey.ek)
            #expect(loaded.expandedRepresentation.hex == pythonKey.dk)
            #expect(try loaded.decapsulate(try [UInt8](hex: pythonKey.c)).hex == pythonKey.k)
            // Swift encapsulates to kyber-py's key; kyber-py decapsulates (checked below).
            let result = try MLKEM768.PublicKey(rawRepresentation: try [UInt8](hex: pythonKey.ek)).encapsulate()
            items.append(.init(dk: pythonKey.dk, c: result.encapsulated.hex))
            expected.append(result.sharedSecret.hex)
        }
        // 50 tampered ciphertexts, half to kyber-py keys and half to Swift keys: both sides must
        // derive the same implicit-rejection key J(z ‖ c).
        var rng = SplitMix64(seed: 0x4B59_4245_52)
        for index in 0..<50 {
            let position = Int(rng.next() % UInt64(MLKEM768.ciphertextByteCount))
            let flip = UInt8(1) << UInt8(rng.next() % 8)
            if index % 2 == 0 {
                let pythonKey = generated.py_keys[index]
                var c = try [UInt8](hex: pythonKey.c)
                c[position] ^= flip
                let loaded = try MLKEM768.PrivateKey(expandedRepresentation: try [UInt8](hex: pythonKey.dk))
                let rejection = try loaded.decapsulate(c).hex
                #expect(rejection != pythonKey.k)
                items.append(.init(dk: pythonKey.dk, c: c.hex))
                expected.append(rejection)
            } else {
                let key = swiftKeys[index]
                var c = try [UInt8](hex: generated.to_swift[index].c)
                c[position] ^= flip
                items.append(.init(dk: key.expandedRepresentation.hex, c: c.hex))
                expected.append(try key.decapsulate(c).hex)
            }
        }
        let pythonSecrets = try InteropPython.call("mlkem_interop.py", DecapsulateRequest(items: items), as: [String].self)
        #expect(pythonSecrets == expected)
        print("ML-KEM-768 interop: \(count) kyber-py→Swift, \(count) Swift→kyber-py (dk-loaded keys), 50 tampered")
    }
}
