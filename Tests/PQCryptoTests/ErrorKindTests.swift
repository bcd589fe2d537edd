import PQCrypto
import Testing

@Suite("PQCrypto errors are values that can grow")
struct PQCryptoErrorKindTests {
    @Test("HexDecodingError carries the count or offset; its kind compares without them")
    func hexDecodingError() {
        let odd = HexDecodingError.oddLength(3)
        #expect(odd.kind == .oddLength && odd.count == 3 && odd.offset == nil)
        #expect(odd == .oddLength(3) && odd != .oddLength(5) && odd.kind == HexDecodingError.oddLength(5).kind)
        let bad = HexDecodingError.invalidCharacter(offset: 2)
        #expect(bad.kind == .invalidCharacter && bad.offset == 2 && bad.kind != odd.kind)
        #expect(odd.description == "hex text has an odd length (3)")
        #expect(bad.description == "hex text has a non-hex character at offset 2")
        #expect(throws: HexDecodingError.invalidCharacter(offset: 1)) { try Hex.decode("0g") }
    }

    @Test("PQCryptoError carries its details and still matches in catch")
    func pqCryptoError() {
        let length = PQCryptoError.invalidLength(what: "seed", expected: 32, actual: 31)
        #expect(length.kind == .invalidLength && length.what == "seed" && length.expected == 32 && length.actual == 31)
        #expect(length != .invalidLength(what: "seed", expected: 32, actual: 30))
        #expect(length.kind != PQCryptoError.encapsulationKeyNotReduced.kind)
        #expect(PQCryptoError.contextTooLong(length: 300).length == 300)
        #expect(PQCryptoError.invalidPrivateKey(reason: "s1").reason == "s1")
        #expect(length.description == "seed must be 32 bytes, got 31")
        #expect("\(PQCryptoError.decapsulationKeyHashMismatch)" == "ML-KEM decapsulation key hash check failed")
        var caught = false
        do { throw PQCryptoError.encapsulationKeyNotReduced } catch PQCryptoError.decapsulationKeyHashMismatch {
        } catch PQCryptoError.encapsulationKeyNotReduced { caught = true } catch {}
        #expect(caught)
    }
}
