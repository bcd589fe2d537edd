import ClassicalCrypto
import Envelope
import PQCrypto
import Testing

@Suite("EnvelopeError is a value that can grow")
struct EnvelopeErrorKindTests {
    @Test("EnvelopeError carries its details; its kind compares without them")
    func envelopeError() {
        let past = EnvelopeError.lengthPrefixPastEnd(declared: 1088, available: 10)
        #expect(past.kind == .lengthPrefixPastEnd && past.declared == 1088 && past.available == 10)
        #expect(past != .lengthPrefixPastEnd(declared: 1088, available: 11))
        #expect(past.kind != EnvelopeError.missingLengthPrefix(byteCount: 1).kind)
        #expect(EnvelopeError.missingLengthPrefix(byteCount: 1).byteCount == 1)
        let ciphertext = EnvelopeError.wrongCiphertextLength(expected: 1088, actual: 5)
        #expect(ciphertext.expected == 1088 && ciphertext.actual == 5)
        #expect(EnvelopeError.invalidPostKeyLength(expected: 32, actual: 1).actual == 1)
        let hex = EnvelopeError.invalidHex(.oddLength(3))
        #expect(hex.hexError == .oddLength(3) && hex.description == "envelope is not hex: hex text has an odd length (3)")
        let sealed = EnvelopeError.sealedKeyFailed(.authenticationFailed)
        #expect(sealed.cryptoError == .authenticationFailed)
        #expect(sealed.description
            == "envelope's sealed post key did not open: sealed box failed authentication (wrong key or altered data)")
    }
}
