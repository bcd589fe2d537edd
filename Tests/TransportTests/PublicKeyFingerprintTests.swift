import Foundation
import Testing
import TestSupport
@testable import Transport

@Suite("Transport: public-key fingerprints")
struct PublicKeyFingerprintTests {
    /// FIPS 180-4 example values and the one-million-'a' message.
    @Test func sha256KnownAnswers() {
        #expect(SHA256Digest.hash([UInt8]()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.hash(Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256Digest.hash([UInt8](repeating: 0x61, count: 1_000_000)).hex
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Every length around the 64-byte block and padding boundaries, against Python's hashlib.
    @Test func sha256MatchesHashlib() throws {
        var rng = SplitMix64(seed: 0x5A_256)
        let inputs = (Array(0...200) + [255, 256, 257, 1000, 4095, 4096, 4097]).map { rng.bytes($0) }
        let expected = try InteropPython.call("hashlib_sha256.py", inputs.map(\.hex), as: [String].self)
        #expect(expected.count == inputs.count)
        for (input, digest) in zip(inputs, expected) {
            #expect(SHA256Digest.hash(input).hex == digest, "length \(input.count)")
        }
    }

    /// The fingerprint of each certificate's key equals the pin OpenSSL computed (see Resources/README.md).
    @Test func certificateFingerprintsMatchOpenSSL() throws {
        let directory = Bundle.module.bundleURL.appendingPathComponent("Resources/certificates")
        let lines = try String(contentsOf: directory.appendingPathComponent("pins.txt"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let parts = line.split(separator: " ")
            try #require(parts.count == 2)
            let der = try Data(contentsOf: directory.appendingPathComponent("\(parts[0]).der"))
            let fingerprint = try PublicKeyFingerprint(certificateDER: der)
            #expect(fingerprint.base64 == String(parts[1]), "\(parts[0])")
            #expect(fingerprint.pinString == "sha256//" + parts[1])
            #expect(try PublicKeyFingerprint(pin: fingerprint.pinString) == fingerprint)
            #expect(try PublicKeyFingerprint(pin: String(parts[1])) == fingerprint)
        }
    }

    /// Malformed certificates from the network throw, never trap: every truncation, and random
    /// single-byte corruptions of the structure.
    @Test func malformedCertificatesThrow() throws {
        let url = Bundle.module.bundleURL.appendingPathComponent("Resources/certificates/ec-p256.der")
        let der = [UInt8](try Data(contentsOf: url))
        for length in 0..<der.count {
            #expect(throws: PublicKeyFingerprint.ParseError.malformedCertificate) {
                _ = try PublicKeyFingerprint(certificateDER: der[0..<length])
            }
        }
        var rng = SplitMix64(seed: 77)
        for _ in 0..<2000 {
            var corrupted = der
            let index = Int(rng.next() % UInt64(min(der.count, 40)))  // headers live near the start
            corrupted[index] = UInt8(truncatingIfNeeded: rng.next())
            _ = try? PublicKeyFingerprint(certificateDER: corrupted)  // must return or throw, not crash
        }
        #expect(throws: PublicKeyFingerprint.ParseError.malformedCertificate) {
            _ = try PublicKeyFingerprint(certificateDER: [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(throws: PublicKeyFingerprint.ParseError.malformedCertificate) {
            _ = try PublicKeyFingerprint(certificateDER: [0x1F, 0x00])
        }
    }

    @Test func pinStringsAreValidated() throws {
        #expect(throws: PublicKeyFingerprint.ParseError.notBase64) { _ = try PublicKeyFingerprint(pin: "sha256//!!!") }
        #expect(throws: PublicKeyFingerprint.ParseError.wrongLength(3)) { _ = try PublicKeyFingerprint(pin: "sha256//AAAA") }
        #expect(throws: PublicKeyFingerprint.ParseError.wrongLength(31)) {
            _ = try PublicKeyFingerprint(sha256: [UInt8](repeating: 0, count: 31))
        }
        let fingerprint = try PublicKeyFingerprint(sha256: [UInt8](repeating: 0, count: 32))
        #expect(fingerprint.description == "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    }
}
