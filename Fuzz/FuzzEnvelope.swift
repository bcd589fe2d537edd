// libFuzzer harness for key envelopes and hex: `Envelope.open` of any text (and of any bytes,
// hex-encoded, so the binary layout behind the hex is reached) with a fixed ML-KEM-768 key, and
// `Hex.decode` in both of its forms. Every input either opens or fails with a typed error.
// Build and run with Fuzz/run.sh (see Fuzz/README.md).
import Envelope
import PQCrypto
import ClassicalCrypto

private func violated(_ property: String) -> Never {
    fatalError("property violated: \(property)")
}

/// One device key for every input (a fixed seed: runs are reproducible).
private let deviceKey: MLKEM768.PrivateKey = {
    guard let key = try? MLKEM768.PrivateKey(seedRepresentation: [UInt8](repeating: 7, count: 64)) else {
        violated("a 64-byte seed makes a key")
    }
    return key
}()

/// What one input may make the readers hold at once (checked by AllocationMeter.swift).
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 16, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // Hex: what decodes re-encodes to the lowercased text, and both decoders agree.
    let text = String(decoding: bytes, as: UTF8.self)
    let fromText = try? Hex.decode(text)
    let fromASCII = bytes.withUnsafeBufferPointer { try? Hex.decode($0) }
    if let decoded = fromASCII {
        guard Hex.encode(decoded) == String(decoding: bytes, as: UTF8.self).lowercased() else { violated("hex round trip") }
    }
    if String(validating: bytes, as: UTF8.self) != nil, fromText != fromASCII { violated("the two hex decoders agree") }

    // Envelopes: the text as given, and the bytes behind hex.
    _ = try? Envelope.open(text, with: deviceKey)
    _ = try? Envelope.open(Hex.encode(bytes), with: deviceKey)
    if bytes.count >= 2 {
        // The same bytes with a length prefix that fits, so the parser gets past it more often.
        let body = Array(bytes.dropFirst(2))
        let prefixed = [UInt8(truncatingIfNeeded: body.count >> 8), UInt8(truncatingIfNeeded: body.count)] + body
        _ = try? Envelope.open(Hex.encode(prefixed), with: deviceKey)
    }

    // A sealed envelope opens to its key; with one byte changed it fails (never a wrong key).
    if bytes.count == 34 {
        let postKey = SymmetricKey(data: bytes.prefix(32))
        guard let sealed = try? Envelope.seal(postKey, to: deviceKey.publicKey),
              let opened = try? Envelope.open(sealed, with: deviceKey), opened == postKey else { violated("seal then open") }
        var tampered = Array(sealed.utf8)
        let position = (Int(bytes[32]) << 8 | Int(bytes[33])) % tampered.count
        tampered[position] = tampered[position] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        if let reopened = try? Envelope.open(String(decoding: tampered, as: UTF8.self), with: deviceKey), reopened != postKey {
            violated("a tampered envelope never opens to another key")
        }
    }
    return 0
}
