import ClassicalCrypto
import Foundation
import PQCrypto
import SHA2

/// The pure-Swift classical primitives (what Apple platforms run) against libsodium and libcrypto
/// (what Linux runs by default), in one process: each pair runs in alternating rounds and the
/// median of each side gives the ratio, so machine noise hits both alike. Only in builds that link
/// the system libraries; `Benchmarks/portable.sh` adds the envelope open of both configurations.
func runPortableBenchmarks(options: BenchmarkOptions) {
    if let filter = options.filter, !"portable".hasPrefix(filter), !filter.hasPrefix("portable") { return }
    guard ClassicalCryptoBuild.usesSystemLibraries else {
        print("portable: this build has no system libraries to compare with (build with the default traits)")
        return
    }
    let rounds = max(3, min(options.batches, 9))
    let key = SecureRandom.symmetricKey()
    let nonce = SecureRandom.bytes(count: 24)
    let big = SecureRandom.bytes(count: 64 << 20)
    var sealed = [UInt8](repeating: 0, count: big.count + SecretBox.overheadByteCount)
    var scratch = [UInt8](repeating: 0, count: big.count + 16)

    compare("portable.secretbox.seal.64MiB", bytes: big.count, rounds: rounds, options: options, pure: {
        key.withUnsafeBytes { keyBytes in
            big.withUnsafeBytes { message in
                scratch.withUnsafeMutableBytes { output in
                    nonce.withUnsafeBytes { nonceBytes in
                        _ = XSalsa20Poly1305.seal(message, into: output, key: keyBytes, nonce: nonceBytes)
                    }
                }
            }
        }
    }, system: {
        big.withUnsafeBytes { message in
            sealed.withUnsafeMutableBytes { output in
                nonce.withUnsafeBytes { try? SecretBox.seal(message, into: output, using: key, nonce: $0) }
            }
        }
    })
    // Streamed: the file sealer's state in 256 KiB chunks, in memory.
    let chunk = 256 << 10
    func stream(system: Bool) {
        let state = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0, usesSystemLibrary: system) }
        scratch.withUnsafeMutableBytes {
            state.process(UnsafeMutableRawBufferPointer(rebasing: $0[..<big.count]), inChunksOf: chunk, sealing: true)
        }
        blackHole(state.finalizeTag())
    }
    compare("portable.secretbox.stream.64MiB", bytes: big.count, rounds: rounds, options: options,
            pure: { stream(system: false) }, system: { stream(system: true) })

    let oneMiB = [UInt8](big[0..<(1 << 20)])
    let zeroSalt = [UInt8](repeating: 0, count: 16)
    var digest = [UInt8](repeating: 0, count: 32)
    compare("portable.blake2b-256.1MiB", bytes: oneMiB.count, rounds: rounds, iterations: 20, options: options, pure: {
        oneMiB.withUnsafeBytes { message in
            zeroSalt.withUnsafeBytes { zeros in
                digest.withUnsafeMutableBytes { output in
                    let hasher = BLAKE2bHasher(
                        digestByteCount: 32, key: UnsafeRawBufferPointer(start: nil, count: 0), salt: zeros,
                        personalization: zeros)
                    hasher.update(message)
                    hasher.finalize(into: output)
                }
            }
        }
    }, system: { blackHole(try? BLAKE2b.hash(data: oneMiB)) })
    compare("portable.sha256.1MiB", bytes: oneMiB.count, rounds: rounds, iterations: 20, options: options, pure: {
        var state = SHA256State()
        oneMiB.withUnsafeBytes { state.update($0) }
        digest.withUnsafeMutableBytes { state.finalize(into: $0.baseAddress!) }
    }, system: { blackHole(SHA256.hash(data: oneMiB)) })

    // Argon2id at the key store's cost (libsodium's "moderate": 3 passes over 256 MiB).
    let salt = SecureRandom.bytes(count: 16)
    let limits = Argon2.Limits.moderate
    compare("portable.argon2id.moderate", bytes: nil, rounds: 3, iterations: 1, options: options, pure: {
        var output = [UInt8](repeating: 0, count: 32)
        let password = Array("correct horse battery staple".utf8)
        output.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { passwordBytes in
                salt.withUnsafeBytes { saltBytes in
                    let none = UnsafeRawBufferPointer(start: nil, count: 0)
                    try? Argon2Core.deriveKey(
                        into: out, password: passwordBytes, salt: saltBytes, passes: limits.operations,
                        memoryKiB: limits.memoryBytes / 1024, lanes: 1, secret: none, associatedData: none, variant: .argon2id)
                }
            }
        }
        SecureMemory.zero(&output)
    }, system: {
        blackHole(try? Argon2.deriveKey(password: "correct horse battery staple", salt: salt, limits: limits))
    })

    let signer = Ed25519.PrivateKey()
    let message = SecureRandom.bytes(count: 200)
    let signature = signer.signature(for: message)
    compare("portable.ed25519.verify", bytes: nil, rounds: rounds, iterations: 200, options: options, pure: {
        signature.withUnsafeBytes { signatureBytes in
            message.withUnsafeBytes { messageBytes in
                signer.publicKey.withUnsafeBytes { publicKeyBytes in
                    blackHole(Ed25519Core.verify(signature: signatureBytes, message: messageBytes, publicKey: publicKeyBytes))
                }
            }
        }
    }, system: { blackHole(Ed25519.isValidSignature(signature, for: message, publicKey: signer.publicKey)) })
    compare("portable.ed25519.sign", bytes: nil, rounds: rounds, iterations: 200, options: options, pure: {
        var output = [UInt8](repeating: 0, count: 64)
        output.withUnsafeMutableBytes { out in
            message.withUnsafeBytes { messageBytes in
                signer.seed.withUnsafeBytes { seedBytes in
                    signer.publicKey.withUnsafeBytes { publicKeyBytes in
                        _ = Ed25519Core.sign(message: messageBytes, seed: seedBytes, publicKey: publicKeyBytes, into: out)
                    }
                }
            }
        }
        blackHole(output)
    }, system: { blackHole(signer.signature(for: message)) })
}

/// Runs `pure` and `system` `iterations` times each per round, alternating, and prints both medians
/// (µs per operation, MB/s when `bytes` is given) and pure ÷ system time.
private func compare(_ name: String, bytes: Int?, rounds: Int, iterations: Int = 1, options: BenchmarkOptions,
                     pure: () -> Void, system: () -> Void) {
    if let filter = options.filter, !name.hasPrefix(filter), !"portable".hasPrefix(filter) { return }
    pure()
    system()
    var pureTimes = [Double](), systemTimes = [Double]()
    func time(_ body: () -> Void) -> Double {
        let start = monotonicNanoseconds()
        for _ in 0..<iterations { body() }
        return Double(monotonicNanoseconds() - start) / 1000 / Double(iterations)
    }
    for _ in 0..<rounds {
        pureTimes.append(time(pure))
        systemTimes.append(time(system))
    }
    pureTimes.sort()
    systemTimes.sort()
    let pureMedian = pureTimes[pureTimes.count / 2], systemMedian = systemTimes[systemTimes.count / 2]
    let ratio = pureMedian / systemMedian
    if options.json {
        print("{\"op\":\"\(name)\",\"pure_us\":\(String(format: "%.3f", pureMedian)),"
              + "\"system_us\":\(String(format: "%.3f", systemMedian)),\"time_ratio\":\(String(format: "%.3f", ratio))}")
        return
    }
    var line = name.padding(toLength: 32, withPad: " ", startingAt: 0)
        + String(format: "pure %11.2f µs   system %11.2f µs   pure/system time %.2f", pureMedian, systemMedian, ratio)
    if let bytes {
        line += String(format: "   (throughput %.2f × system: %.0f vs %.0f MB/s)",
                       1 / ratio, Double(bytes) / pureMedian, Double(bytes) / systemMedian)
    }
    print(line + "   [\(rounds) alternating rounds]")
}
