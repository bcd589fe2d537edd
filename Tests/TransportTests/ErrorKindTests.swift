import Foundation
import Testing
import Transport

@Suite("Transport errors are values that can grow")
struct TransportErrorKindTests {
    @Test("TransportError.Kind: equal to itself, not to another; the limit is a detail that prints")
    func transportErrorKind() throws {
        #expect(TransportError.Kind.timedOut == .timedOut)
        #expect(TransportError.Kind.timedOut != .cannotConnect)
        let kind = TransportError.Kind.responseTooLarge(limit: 7)
        #expect(kind.limit == 7 && TransportError.Kind.timedOut.limit == nil)
        #expect(Set<TransportError.Kind>([kind, .responseTooLarge(limit: 8), .other]).count == 2)
        let matched: Int? = switch kind {
        case .responseTooLarge: kind.limit
        case .timedOut: -1
        default: nil
        }
        #expect(matched == 7)
        let url = try #require(URL(string: "http://h/x"))
        let error = TransportError(kind, method: .get, url: url, message: "big")
        #expect(error.description == "responseTooLarge(limit: 7) for GET http://h/x: big")
    }

    @Test("HTTPBodyStreamError carries its limit")
    func bodyStreamError() {
        let error = HTTPBodyStreamError.tooLarge(limit: 4)
        #expect(error.kind == .tooLarge && error.limit == 4)
        #expect(error == .tooLarge(limit: 4) && error != .tooLarge(limit: 5))
        #expect(error.description == "the body is larger than 4 bytes")
    }

    @Test("MultipartForm.Error carries its details")
    func multipartError() {
        let unreadable = MultipartForm.Error.fileUnreadable(path: "/p", reason: "gone")
        #expect(unreadable.kind == .fileUnreadable && unreadable.path == "/p" && unreadable.reason == "gone")
        #expect(unreadable != .fileUnreadable(path: "/p", reason: "other"))
        #expect(unreadable.kind != MultipartForm.Error.fileChanged(path: "/p").kind)
        #expect(MultipartForm.Error.boundaryInContent(part: "a").part == "a")
        #expect(MultipartForm.Error.contentChanged(part: "file").part == "file")
        #expect(MultipartForm.Error.contentChanged(part: "file").kind == .contentChanged)
        #expect(MultipartForm.Error.contentChanged(part: "file").description == #"part "file" yielded other than its declared byte count"#)
        #expect(MultipartForm.Error.invalidBoundary("b").boundary == "b")
        #expect(MultipartForm.Error.invalidName("n\r").name == "n\r")
        #expect(unreadable.description == "cannot read /p: gone")
        #expect(MultipartForm.Error.invalidName("n\r").description == #"multipart name "n\r" contains CR, LF or NUL"#)
    }

    @Test("PublicKeyFingerprint.ParseError carries the count and prints as before")
    func parseError() {
        let error = PublicKeyFingerprint.ParseError.wrongLength(31)
        #expect(error.kind == .wrongLength && error.count == 31)
        #expect(error != .wrongLength(30) && error.kind != PublicKeyFingerprint.ParseError.notBase64.kind)
        #expect(PublicKeyFingerprint.ParseError.notBase64 == .notBase64)
        #expect("\(error)" == "wrongLength(31)" && "\(PublicKeyFingerprint.ParseError.malformedCertificate)" == "malformedCertificate")
        #expect(throws: PublicKeyFingerprint.ParseError.wrongLength(3)) { try PublicKeyFingerprint(sha256: [1, 2, 3]) }
    }
}
