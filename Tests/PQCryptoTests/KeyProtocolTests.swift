import Foundation
import PQCrypto
import Testing

@Suite("The pure-Swift keys are the default MLDSA65SigningKey and MLKEM768DecapsulationKey")
struct KeyProtocolTests {
    /// Signs through the protocol only, as the SDK does.
    func sign(_ message: [UInt8], with key: any MLDSA65SigningKey) throws -> Data { try key.signature(for: message) }

    /// Decapsulates through the protocol only, as the SDK does.
    func decapsulate(_ ciphertext: Data, with key: any MLKEM768DecapsulationKey) throws -> SymmetricKey {
        try key.decapsulate(ciphertext)
    }

    @Test("Through the protocol, MLDSA65.PrivateKey signs hedged with an empty context, verifiable by its public key")
    func signing() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 5, count: 32))
        let message = Array("GET\n/profile".utf8)
        let first = try sign(message, with: key)
        let second = try sign(message, with: key)
        #expect(first.count == 3309 && first != second)  // hedged: fresh randomness each time
        let signer: any MLDSA65SigningKey = key
        #expect(signer.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(key.publicKey.isValidSignature(first, for: message))
        #expect(key.publicKey.isValidSignature(second, for: message, context: Data()))
        #expect(!key.publicKey.isValidSignature(first, for: message, context: [0]))
        // The concrete call keeps its typed error.
        let typed: () throws(PQCryptoError) -> Data = { try key.signature(for: message) }
        #expect(key.publicKey.isValidSignature(try typed(), for: message))
    }

    @Test("Through the protocol, MLKEM768.PrivateKey decapsulates to the encapsulated 32-byte secret, and refuses a wrong length")
    func decapsulation() throws {
        let key = MLKEM768.PrivateKey()
        let encapsulation = key.publicKey.encapsulate()
        let secret = try decapsulate(encapsulation.encapsulated, with: key)
        #expect(secret == encapsulation.sharedSecret && secret.bitCount == 256)
        let decapsulator: any MLKEM768DecapsulationKey = key
        #expect(decapsulator.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(throws: PQCryptoError.self) { try decapsulate(encapsulation.encapsulated.dropLast(), with: key) }
    }
}
