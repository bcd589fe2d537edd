import ClassicalCrypto
import Testing

@Suite("ClassicalCrypto errors are values that can grow")
struct ClassicalCryptoErrorKindTests {
    @Test("ClassicalCryptoError carries its details; its kind compares without them")
    func classicalCryptoError() {
        let key = ClassicalCryptoError.invalidKeyLength(expected: 32, actual: 31)
        #expect(key.kind == .invalidKeyLength && key.expected == 32 && key.actual == 31)
        #expect(key == .invalidKeyLength(expected: 32, actual: 31) && key != .invalidKeyLength(expected: 32, actual: 30))
        #expect(key.kind != ClassicalCryptoError.invalidNonceLength(expected: 32, actual: 31).kind)
        #expect(key != .invalidNonceLength(expected: 32, actual: 31))
        let short = ClassicalCryptoError.sealedBoxTooShort(minimum: 40, actual: 3)
        #expect(short.minimum == 40 && short.actual == 3)
        let file = ClassicalCryptoError.fileSystem(operation: "open", path: "/x", errno: 2)
        #expect(file.operation == "open" && file.path == "/x" && file.errno == 2)
        let parameter = ClassicalCryptoError.invalidParameter(name: "salt", reason: "short")
        #expect(parameter.name == "salt" && parameter.reason == "short")
        #expect(ClassicalCryptoError.passwordHashingFailed(errno: 12).errno == 12)
        #expect(ClassicalCryptoError.fileChanged(path: "/y").path == "/y")
        #expect(short.description == "sealed box must be at least 40 bytes, got 3")
        #expect(file.description == "open failed for /x (errno 2)")
        #expect("\(ClassicalCryptoError.authenticationFailed)" == "sealed box failed authentication (wrong key or altered data)")
        let decision = switch file.kind {
        case .authenticationFailed: "tampered"
        case .fileSystem, .fileChanged: "disk"
        default: "input"
        }
        #expect(decision == "disk")
    }
}
