import Foundation
import PQCrypto

func mlkemBenchmarks() -> [TimedOperation] {
    let privateKey = MLKEM768.PrivateKey()
    let rawPublicKey = privateKey.publicKey.rawRepresentation
    let ciphertext = privateKey.publicKey.encapsulate().encapsulated
    return [
        TimedOperation(name: "mlkem768.keygen", iterations: 200) { n in
            for _ in 0..<n { blackHole(MLKEM768.PrivateKey()) }
        },
        // As when a station's key is loaded from its 1184 bytes for each envelope.
        TimedOperation(name: "mlkem768.encaps", iterations: 300) { n in
            for _ in 0..<n {
                guard let key = try? MLKEM768.PublicKey(rawRepresentation: rawPublicKey) else { fatalError("bad key") }
                blackHole(key.encapsulate())
            }
        },
        // With a parsed private key, as a device holds it.
        TimedOperation(name: "mlkem768.decaps", iterations: 300) { n in
            for _ in 0..<n { blackHole(try? privateKey.decapsulate(ciphertext)) }
        },
    ]
}
