import PQCrypto
import Signing
import Testing

@Suite("SigningError is a value that can grow")
struct SigningErrorKindTests {
    @Test("SigningError carries its details; its kind compares without them")
    func signingError() {
        let header = SigningError.invalidHeaderValue(name: "X-Device", value: " a")
        #expect(header.kind == .invalidHeaderValue && header.name == "X-Device" && header.value == " a")
        #expect(header != .invalidHeaderValue(name: "X-Device", value: "b") && header.kind != SigningError.invalidPath("/").kind)
        #expect(SigningError.invalidMethod("G T").method == "G T")
        #expect(SigningError.invalidPath("a").path == "a")
        #expect(SigningError.invalidBodyDigestLength(31).count == 31)
        let failed = SigningError.signingFailed(.contextTooLong(length: 256))
        #expect(failed.underlying == .contextTooLong(length: 256))
        #expect(failed.description == "ML-DSA signing failed: ML-DSA context must be at most 255 bytes, got 256")
        #expect(header.description == #"invalid value for X-Device: " a""#)
    }
}
