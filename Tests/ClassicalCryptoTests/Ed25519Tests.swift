import Foundation
import PQCrypto
import ClassicalCrypto
import TestSupport
import Testing

@Suite("Ed25519 through libsodium")
struct Ed25519Tests {
    /// RFC 8032 §7.1, TEST 1 (empty message) and TEST 2 (one byte).
    @Test func rfc8032Vectors() throws {
        let key = try Ed25519.PrivateKey(seed: SymmetricKey(data: [UInt8](hex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")))
        #expect(key.publicKey.hex == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let signature = key.signature(for: [UInt8]())
        #expect(signature.hex == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(Ed25519.isValidSignature(signature, for: [UInt8](), publicKey: key.publicKey))
        #expect(!Ed25519.isValidSignature(signature, for: [UInt8(0x72)], publicKey: key.publicKey))

        let second = try Ed25519.PrivateKey(seed: SymmetricKey(data: [UInt8](hex: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")))
        #expect(second.publicKey.hex == "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
        #expect(second.signature(for: [UInt8(0x72)]).hex == "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")
    }

    @Test func rejectsBadSeedAndRandomKeysDiffer() {
        #expect(throws: ClassicalCryptoError.invalidKeyLength(expected: 32, actual: 31)) {
            try Ed25519.PrivateKey(seed: SymmetricKey(data: [UInt8](repeating: 1, count: 31)))
        }
        #expect(Ed25519.PrivateKey().publicKey != Ed25519.PrivateKey().publicKey)
        #expect(!Ed25519.isValidSignature([UInt8](repeating: 0, count: 63), for: [UInt8](), publicKey: [UInt8](repeating: 0, count: 32)))
    }
}
