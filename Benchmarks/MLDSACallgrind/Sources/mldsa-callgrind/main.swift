import Foundation
import PQCrypto

// mldsa-callgrind keygen|sign|verify|verify-kept|verify-setup N
// mldsa-callgrind mlkem-keygen|mlkem-encaps|mlkem-decaps N: ML-KEM-768 keys from fixed seeds, N
// encapsulations to one key (the system's randomness: counts vary by a few instructions), and N
// decapsulations of fixed ciphertexts (run with N = 0 for the setup to subtract).
// keygen: N keys from fixed seeds. sign: N deterministic signatures of fixed messages with one
// key. verify: N × (parse the public key + verify), after signing the N messages (the setup,
// which verify-setup runs alone so that it can be subtracted). verify-kept: the same N
// verifications with one public key parsed once, as a station keeps a device's key.
let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: mldsa-callgrind keygen|sign|verify|verify-kept|verify-setup N\n".utf8))
    exit(2)
}
func seed(_ i: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i &* 7 &+ 1) } }
func message(_ i: Int) -> [UInt8] { (0..<200).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) } }
func fail(_ what: String) -> Never {
    FileHandle.standardError.write(Data("mldsa-callgrind: \(what)\n".utf8))
    exit(1)
}
guard let key = try? MLDSA65.PrivateKey(seedRepresentation: seed(1000)) else { fail("key") }
let publicKeyBytes = key.publicKey.rawRepresentation
var sink = 0
switch arguments[1] {
case "keygen":
    for i in 0..<count {
        guard let k = try? MLDSA65.PrivateKey(seedRepresentation: seed(i)) else { fail("keygen") }
        sink &+= Int(k.publicKey.rawRepresentation[5])
    }
case "sign":
    for i in 0..<count {
        guard let s = try? key.signature(for: message(i), deterministic: true) else { fail("sign") }
        sink &+= Int(s[7])
    }
case "verify", "verify-kept", "verify-setup":
    let signatures = (0..<count).map { (try? key.signature(for: message($0), deterministic: true)) ?? Data() }
    guard let kept = try? MLDSA65.PublicKey(rawRepresentation: publicKeyBytes) else { fail("parse") }
    if arguments[1] == "verify-kept" {
        for i in 0..<count {
            guard kept.isValidSignature(signatures[i], for: message(i)) else { fail("verify") }
            sink &+= 1
        }
    }
    if arguments[1] == "verify" {
        for i in 0..<count {
            guard let publicKey = try? MLDSA65.PublicKey(rawRepresentation: publicKeyBytes),
                  publicKey.isValidSignature(signatures[i], for: message(i))
            else { fail("verify") }
            sink &+= 1
        }
    }
case "mlkem-keygen":
    for i in 0..<count {
        let kemSeed = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i &* 5 &+ 3) }
        guard let k = try? MLKEM768.PrivateKey(seedRepresentation: kemSeed) else { fail("mlkem keygen") }
        sink &+= Int(k.publicKey.rawRepresentation[5])
    }
case "mlkem-encaps", "mlkem-decaps":
    let kemSeed = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 3) }
    guard let kemKey = try? MLKEM768.PrivateKey(seedRepresentation: kemSeed) else { fail("mlkem key") }
    let kemPublic = kemKey.publicKey
    if arguments[1] == "mlkem-encaps" {
        for _ in 0..<count { sink &+= Int(kemPublic.encapsulate().encapsulated[3]) }
    } else {
        // Fixed ciphertexts (bytes that need not come from encapsulate: decapsulation implicitly
        // rejects them, which runs the same code).
        for i in 0..<count {
            let ciphertext = (0..<MLKEM768.ciphertextByteCount).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ i) }
            guard let secret = try? kemKey.decapsulate(ciphertext) else { fail("mlkem decaps") }
            sink &+= secret.withUnsafeBytes { Int($0[0]) }
        }
    }
default:
    fail("unknown mode \(arguments[1])")
}
print(sink)
