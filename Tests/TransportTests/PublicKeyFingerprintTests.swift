import Foundation
import Testing
import TestSupport
@testable import Transport

@Suite("Transport: public-key fingerprints")
struct PublicKeyFingerprintTests {
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
