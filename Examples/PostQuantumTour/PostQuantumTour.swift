// A tour of PQCrypto: the two post-quantum algorithms a Cipher Station client uses.
// Run with `swift run cipher-examples post-quantum-tour`.
import Foundation
import PQCrypto

enum PostQuantumTour {
    static let usage = ExampleUsage(name: "post-quantum-tour", summary: """
        ML-KEM-768 (encapsulate, decapsulate, reload an expanded key) and SHA3-256 on their own,
        the post-quantum pieces a Cipher Station client uses. Talks to no station.
        """, networked: false)

    static func run(_ arguments: [String]) throws {
        _ = ExampleArguments.parse(arguments, usage: usage)

        // 1. ML-KEM-768: a station seals each post key to a device's (or follower's) public key.
        let deviceKey = MLKEM768.PrivateKey()
        let stationSide = try MLKEM768.PublicKey(rawRepresentation: deviceKey.publicKey.rawRepresentation)
        let sealed = stationSide.encapsulate()
        let recovered = try deviceKey.decapsulate(sealed.encapsulated)
        print("ML-KEM-768: public key \(deviceKey.publicKey.rawRepresentation.count) B, "
            + "ciphertext \(sealed.encapsulated.count) B, shared secrets match: \(recovered == sealed.sharedSecret)")

        // Keys travel as the FIPS 203 encodings kyber-py uses; the expanded form loads back.
        let reloaded = try MLKEM768.PrivateKey(expandedRepresentation: deviceKey.expandedRepresentation)
        print("ML-KEM-768: reloaded 2400-byte key decapsulates too: \(try reloaded.decapsulate(sealed.encapsulated) == recovered)")

        // 2. SHA-3 and SHAKE, the hashes underneath.
        let digest = SHA3_256.hash(data: Array("cipher station".utf8))
        print("SHA3-256(\"cipher station\") = \(digest.map { String(format: "%02x", $0) }.joined())")
    }
}
