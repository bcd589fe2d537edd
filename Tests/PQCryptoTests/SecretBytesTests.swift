import Foundation
import PQCrypto
import Testing

/// Private keys in and out of zeroizable storage: `expandedSecret` holds the same bytes as
/// `expandedRepresentation`, and `init(expandedSecret:)` loads them with the same checks.
@Suite("SecretBytes and the keys' expanded secrets")
struct SecretBytesTests {
    @Test func mlkemExpandedSecretRoundTrips() throws {
        let key = MLKEM768.PrivateKey()
        let secret: SecretBytes = key.expandedSecret
        #expect(secret.count == MLKEM768.expandedPrivateKeyByteCount)
        #expect(secret.withUnsafeBytes { Data($0) } == key.expandedRepresentation)
        let loaded = try MLKEM768.PrivateKey(expandedSecret: secret)
        #expect(loaded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(throws: PQCryptoError.self) { try MLKEM768.PrivateKey(expandedSecret: SecretBytes(copying: [1, 2, 3])) }
    }

    @Test func mldsaExpandedSecretRoundTrips() throws {
        let key = MLDSA65.PrivateKey()
        let secret = key.expandedSecret
        #expect(secret.withUnsafeBytes { Data($0) } == key.expandedRepresentation)
        let loaded = try MLDSA65.PrivateKey(expandedSecret: secret)
        #expect(loaded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        var damaged = secret.withUnsafeBytes { [UInt8]($0) }
        damaged[200] ^= 0xFF
        #expect(throws: PQCryptoError.self) { try MLDSA65.PrivateKey(expandedSecret: SecretBytes(zeroing: &damaged)) }
    }

    @Test func buildingInPlaceZeroesOnAThrow() {
        struct Stop: Error {}
        #expect(throws: Stop.self) { _ = try SecretBytes(count: 8) { _ throws(Stop) in throw Stop() } }
        let built = SecretBytes(count: 3) { $0.copyBytes(from: [7, 8, 9]) }
        #expect(built == SecretBytes(copying: [7, 8, 9]) && built != SecretBytes(copying: [7, 8, 0]))
    }
}
