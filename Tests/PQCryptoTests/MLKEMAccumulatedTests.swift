import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// The "accumulated" test (Go's crypto/mlkem procedure, final FIPS 203): many keys, encapsulations
/// and implicit rejections driven by one SHAKE128 stream, all outputs hashed into another.
@Suite("ML-KEM-768 accumulated")
struct MLKEMAccumulatedTests {
    struct File: Decodable {
        let mlkem: MLKEM
        enum CodingKeys: String, CodingKey { case mlkem = "ML-KEM-768" }
        struct MLKEM: Decodable {
            let procedure: Procedure
            enum CodingKeys: String, CodingKey { case procedure = "final_FIPS_203_go_procedure" }
        }
        struct Procedure: Decodable { let expected: [String: String] }
    }

    @Test(arguments: [100])
    func accumulatedHash(iterations: Int) throws {
        let file = try loadVectors("cctv/accumulated.json", as: File.self)
        let expected = try #require(file.mlkem.procedure.expected[String(iterations)])
        var source = SHAKE128().finalize()
        var output = SHAKE128()
        for _ in 0..<iterations {
            let key = try MLKEM768.PrivateKey(seedRepresentation: source.read(count: 64))
            output.update(data: key.publicKey.rawRepresentation)
            let result = key.publicKey.encapsulate(randomness: source.read(count: 32))
            output.update(data: result.encapsulated)
            result.sharedSecret.withUnsafeBytes { output.update(bufferPointer: $0) }
            try #require(try key.decapsulate(result.encapsulated) == result.sharedSecret)
            let rejected = try key.decapsulate(source.read(count: MLKEM768.ciphertextByteCount))
            rejected.withUnsafeBytes { output.update(bufferPointer: $0) }
        }
        var reader = output.finalize()
        #expect(reader.read(count: 32).hex == expected)
        print("ML-KEM-768 accumulated (\(iterations) iterations): matches")
    }
}
