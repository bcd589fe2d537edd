import BenchmarkSupport
import Envelope
import Foundation
import PQCrypto
import Signing
import ClassicalCrypto

/// Runs the ClassicalCrypto, Envelope and Signing groups. The streamed SecretBox runs before anything
/// holds 64 MiB in memory, and the growth of the peak resident size across it is printed to
/// standard error, to show that streaming uses constant memory.
func runClassicalCryptoBenchmarks(options: BenchmarkOptions) {
    for benchmark in envelopeBenchmarks() + signingBenchmarks() {
        measure(benchmark, options: options)
    }
    let wantsSecretBox = options.filter.map { "secretbox".hasPrefix($0) || $0.hasPrefix("secretbox") } ?? true
    guard wantsSecretBox else { return }
    let streamed = StreamedFiles(byteCount: 64 << 20, key: SecureRandom.symmetricKey())
    defer { streamed.remove() }
    let secretBox = secretBoxBenchmarks(streamed: streamed)
    let before = peakResidentKiB()
    let streams = ["secretbox.stream", "secretbox.twopass"]
    for (benchmark, bytes) in secretBox where streams.contains(where: benchmark.name.hasPrefix) {
        measure(benchmark, bytesPerOperation: bytes, options: options)
    }
    let ranStreams = secretBox.contains { benchmark, _ in
        streams.contains(where: benchmark.name.hasPrefix) && options.filter.map { benchmark.name.hasPrefix($0) } ?? true
    }
    if ranStreams {
        FileHandle.standardError.write(Data(
            "secretbox.stream: peak resident size grew by \(peakResidentKiB() - before) KiB over 64 MiB files\n".utf8))
    }
    for (benchmark, bytes) in secretBox where !streams.contains(where: benchmark.name.hasPrefix) {
        measure(benchmark, bytesPerOperation: bytes, options: options)
    }
}

/// SecretBox throughput: one-shot in memory (the baseline: one libsodium call over the bytes)
/// and streamed through files on disk (both passes, constant memory), with bytes per operation.
func secretBoxBenchmarks(streamed: StreamedFiles) -> [(TimedOperation, Int)] {
    let key = streamed.key
    let nonce = SecureRandom.bytes(count: 24)
    let oneMiB = SecureRandom.bytes(count: 1 << 20)
    let size = streamed.byteCount
    return [
        (TimedOperation(name: "secretbox.seal.1MiB", iterations: 20) { n in
            for _ in 0..<n { blackHole(try? SecretBox.seal(oneMiB, using: key, nonce: nonce)) }
        }, 1 << 20),
        // Seal the 64 MiB file into a new file (one pass; the tag is written into place at the end).
        (TimedOperation(name: "secretbox.stream.seal.64MiB", iterations: 1) { n in
            for _ in 0..<n { streamed.seal() }
        }, size),
        // The two-pass sealer for sinks that cannot seek, as an upload body source: both passes
        // over the file on disk, the bytes handed to a sink that drops them (the network's place).
        (TimedOperation(name: "secretbox.twopass.64MiB", iterations: 1) { n in
            for _ in 0..<n { streamed.sealTwoPass() }
        }, size),
        // Open it back into a plaintext file: pass 1 (verify) and pass 2 (decrypt, re-verify, write).
        (TimedOperation(name: "secretbox.stream.open.64MiB", iterations: 1) { n in
            for _ in 0..<n { streamed.open() }
        }, size),
        // Both directions, both passes each: 2 × 64 MiB of SecretBox work per operation.
        (TimedOperation(name: "secretbox.stream.64MiB", iterations: 1) { n in
            for _ in 0..<n {
                streamed.seal()
                streamed.open()
            }
        }, 2 * size),
        // The baseline: one crypto_secretbox_easy call over 64 MiB already in memory, into a
        // preallocated buffer.
        (TimedOperation(name: "secretbox.oneshot.64MiB", iterations: 1) { n in
            streamed.withOneShotBuffers { message, output in
                for _ in 0..<n {
                    do {
                        try nonce.withUnsafeBytes { try SecretBox.seal(message, into: output, using: key, nonce: $0) }
                    } catch {
                        fatalError("one-shot seal: \(error)")
                    }
                }
            }
        }, size),
        (TimedOperation(name: "secretbox.oneshotopen.64MiB", iterations: 1) { n in
            streamed.withOneShotBuffers { message, output in
                for _ in 0..<n {
                    do {
                        try SecretBox.open(UnsafeRawBufferPointer(output), into: UnsafeMutableRawBufferPointer(mutating: message), using: key)
                    } catch {
                        fatalError("one-shot open: \(error)")
                    }
                }
            }
        }, size),
    ]
}

/// The 64 MiB plaintext file and its sealed and opened copies in a temporary directory.
final class StreamedFiles: @unchecked Sendable {
    let directory: URL
    let plain: URL
    let sealed: URL
    let opened: URL
    let byteCount: Int
    let key: SymmetricKey

    init(byteCount: Int, key: SymmetricKey) {
        self.byteCount = byteCount
        self.key = key
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cipher-bench-\(getpid())")
        plain = directory.appendingPathComponent("plain")
        sealed = directory.appendingPathComponent("sealed")
        opened = directory.appendingPathComponent("opened")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: plain.path, contents: nil) else { fatalError("create \(plain.path)") }
        if let handle = try? FileHandle(forWritingTo: plain) {
            for _ in 0..<(byteCount >> 20) { handle.write(Data(SecureRandom.bytes(count: 1 << 20))) }
            try? handle.close()
        }
        seal()
    }

    /// Deletes the files.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
        if let buffers = oneShotBuffers {
            buffers.message.deallocate()
            buffers.output.deallocate()
            oneShotBuffers = nil
        }
    }

    func seal() {
        do { try SecretBox.sealFile(at: plain, to: sealed, using: key) } catch { fatalError("stream seal: \(error)") }
    }

    func sealTwoPass() {
        do {
            let sealer = try SecretBoxFileSealer(plaintextAt: plain, using: key)
            var handedOut = 0
            try sealer.writeSealedBytes { handedOut += $0.count }
            guard handedOut == byteCount + 40 else { fatalError("two-pass seal handed out \(handedOut) bytes") }
        } catch {
            fatalError("two-pass seal: \(error)")
        }
    }

    func open() {
        do { try SecretBox.openFile(at: sealed, to: opened, using: key) } catch { fatalError("stream open: \(error)") }
    }

    private var oneShotBuffers: (message: UnsafeMutableRawBufferPointer, output: UnsafeMutableRawBufferPointer)?

    /// Runs `body` with the plaintext in memory and an output buffer for the one-shot baseline;
    /// both are made on the first (warm-up) call and kept, so no timed call reads the file.
    func withOneShotBuffers(_ body: (UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) -> Void) {
        if oneShotBuffers == nil {
            guard let data = try? Data(contentsOf: plain) else { fatalError("read \(plain.path)") }
            let message = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 64)
            message.copyBytes(from: data)
            let output = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count + 40, alignment: 64)
            // A valid sealed box, so that the open baseline does the whole open.
            do {
                try SecureRandom.bytes(count: 24).withUnsafeBytes {
                    try SecretBox.seal(UnsafeRawBufferPointer(message), into: output, using: key, nonce: $0)
                }
            } catch {
                fatalError("one-shot setup: \(error)")
            }
            oneShotBuffers = (message, output)
        }
        guard let buffers = oneShotBuffers else { return }
        body(UnsafeRawBufferPointer(buffers.message), buffers.output)
    }
}

/// Envelope seal (with a parsed public key, as a client holds the station's) and open (with a
/// parsed private key, as a device holds its own).
func envelopeBenchmarks() -> [TimedOperation] {
    let recipient = MLKEM768.PrivateKey()
    let publicKey = recipient.publicKey
    let postKey = SecureRandom.symmetricKey()
    guard let envelope = try? Envelope.seal(postKey, to: publicKey) else { fatalError("envelope seal") }
    return [
        TimedOperation(name: "envelope.seal", iterations: 300) { n in
            for _ in 0..<n { blackHole(try? Envelope.seal(postKey, to: publicKey)) }
        },
        TimedOperation(name: "envelope.open", iterations: 300) { n in
            for _ in 0..<n { blackHole(try? Envelope.open(envelope, with: recipient)) }
        },
    ]
}

/// Request signing: SHA-256 of the body, the canonical string and a hedged ML-DSA-65 signature.
func signingBenchmarks() -> [TimedOperation] {
    guard let privateKey = try? MLDSA65.PrivateKey(seedRepresentation: SecureRandom.bytes(count: 32)) else {
        fatalError("ML-DSA key")
    }
    let signer = RequestSigner(identity: SigningIdentity(
        uid: "da27af3e-b2ac-4d02-a894-3c22d638d1ba", deviceUID: "bench-device-990dcf48", privateKey: privateKey))
    let smallBody = SecureRandom.bytes(count: 1 << 10)
    let largeBody = SecureRandom.bytes(count: 1 << 20)
    return [
        TimedOperation(name: "signing.sign.1KiB", iterations: 50) { n in
            for _ in 0..<n { blackHole(try? signer.sign(method: "POST", path: "/rewrap", body: smallBody)) }
        },
        TimedOperation(name: "signing.sign.1MiB", iterations: 20) { n in
            for _ in 0..<n { blackHole(try? signer.sign(method: "POST", path: "/post", body: largeBody)) }
        },
    ]
}

/// Peak resident memory so far, in KiB.
func peakResidentKiB() -> Int { ResourceUsage.peakResidentBytes() / 1024 }
