import Foundation
import PQCrypto

/// ML-DSA-65: key generation, signing a 200-byte message with a parsed private key (hedged, empty
/// context), and verification starting from the 1952 raw public-key bytes (parse + verify per
/// operation). `Benchmarks/comparators/mldsa_openssl.py` times the same operations in OpenSSL.
func mldsaBenchmarks() -> [TimedOperation] {
    let message = [UInt8]((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let key = MLDSA65.PrivateKey()
    let publicKeyBytes = key.publicKey.rawRepresentation
    let signature = (try? key.signature(for: message)) ?? Data()
    return [
        TimedOperation(name: "mldsa65.keygen", iterations: 100) { n in
            for _ in 0..<n { blackHole(MLDSA65.PrivateKey()) }
        },
        TimedOperation(name: "mldsa65.sign", iterations: 50) { n in
            for _ in 0..<n { blackHole(try? key.signature(for: message)) }
        },
        TimedOperation(name: "mldsa65.verify", iterations: 100) { n in
            for _ in 0..<n {
                let publicKey = try? MLDSA65.PublicKey(rawRepresentation: publicKeyBytes)
                blackHole(publicKey?.isValidSignature(signature, for: message))
            }
        },
    ]
}
