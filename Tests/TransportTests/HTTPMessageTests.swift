import Foundation
import Testing
@testable import Transport

@Suite("Transport: headers, requests, ranges")
struct HTTPMessageTests {
    @Test func headerLookupIsCaseInsensitiveAndWritesKeepSpelling() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-Cipher-UID": "u1"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers["x-cipher-uid"] == "u1")
        #expect(headers["Content-Typ"] == nil)
        headers.add("set-cookie", value: "a")
        headers.add("Set-Cookie", value: "b")
        #expect(headers.values(for: "SET-COOKIE") == ["a", "b"])
        #expect(headers.count == 4)
        // Setting replaces the first field in place and drops later ones with the same name.
        headers["SET-cookie"] = "c"
        #expect(headers.fields.map(\.name) == ["Content-Type", "X-Cipher-UID", "set-cookie"])
        #expect(headers.values(for: "set-cookie") == ["c"])
        headers["x-cipher-uid"] = nil
        #expect(!headers.contains("X-Cipher-UID"))
        headers["X-New"] = "n"
        #expect(headers.fields.last == HTTPHeaders.Field(name: "X-New", value: "n"))
        headers.remove("CONTENT-type")
        #expect(headers.fields.map(\.name) == ["set-cookie", "X-New"])
        #expect(headers.description == "set-cookie: c\nX-New: n")
    }

    @Test func nonASCIINamesDoNotMatchByCaseFolding() {
        let headers = HTTPHeaders([("Straße", "1")])
        #expect(headers["STRASSE"] == nil)
        #expect(headers["straße"] == "1")
        #expect(HTTPHeaders.namesMatch("İ", "i") == false)
    }

    @Test func requestValidation() throws {
        let url = try #require(URL(string: "https://station.example/post"))
        try HTTPRequest(method: .post, url: url, headers: ["X-Cipher-Signature": "abc", "Empty": ""]).validate()
        let bad: [(HTTPRequest, String)] = [
            (HTTPRequest(method: .get, url: try #require(URL(string: "file:///etc/passwd"))), "scheme"),
            (HTTPRequest(method: .get, url: try #require(URL(string: "http:///nohost"))), "host"),
            (HTTPRequest(method: HTTPMethod(""), url: url), "method"),
            (HTTPRequest(method: HTTPMethod("GE T"), url: url), "method"),
            (HTTPRequest(method: .get, url: url, headers: ["X Space": "v"]), "header name"),
            (HTTPRequest(method: .get, url: url, headers: ["": "v"]), "header name"),
            (HTTPRequest(method: .get, url: url, headers: ["X-A": "line\nbreak"]), "value"),
            (HTTPRequest(method: .get, url: url, headers: ["X-A": "carriage\rreturn"]), "value"),
            (HTTPRequest(method: .get, url: url, headers: ["X-A": "nul\u{0}"]), "value"),
        ]
        for (request, what) in bad {
            #expect(throws: TransportError.self, "\(what)") { try request.validate() }
            do {
                try request.validate()
            } catch let error as TransportError {
                #expect(error.kind == .invalidRequest)
                #expect(error.url == request.url)
                #expect(error.method == request.method)
            }
        }
    }

    @Test func byteRangeHeaderValues() throws {
        #expect(ByteRange.closed(0...99).headerValue == "bytes=0-99")
        #expect(ByteRange.from(500).headerValue == "bytes=500-")
        #expect(ByteRange.suffix(20).headerValue == "bytes=-20")
        var request = HTTPRequest(method: .get, url: try #require(URL(string: "http://h/c")))
        request.byteRange = .closed(10...19)
        #expect(request.headers["range"] == "bytes=10-19")
        #expect(request.byteRange == .closed(10...19))
        request.byteRange = nil
        #expect(!request.headers.contains("Range"))
        for range in [ByteRange.closed(0...0), .closed(5...900), .from(0), .from(123), .suffix(1)] {
            #expect(ByteRange(headerValue: range.headerValue) == range)
        }
        for invalid in ["bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=-", "bytes=a-b", "bytes=1", "",
                        "bytes=99999999999999999999-"] {
            #expect(ByteRange(headerValue: invalid) == nil, "\(invalid)")
        }
    }

    @Test func contentRangeParsing() {
        #expect(ContentRange(headerValue: "bytes 0-99/1000") == ContentRange(range: 0...99, completeLength: 1000))
        #expect(ContentRange(headerValue: " bytes 5-5/* ") == ContentRange(range: 5...5, completeLength: nil))
        #expect(ContentRange(headerValue: "bytes */1000") == ContentRange(range: nil, completeLength: 1000))
        for invalid in ["bytes */*", "bytes 10-5/100", "bytes 0-100/100", "bytes 0-9", "items 0-9/10", "bytes -1-5/10",
                        "bytes 0-9/abc", "bytes a-9/10", ""] {
            #expect(ContentRange(headerValue: invalid) == nil, "\(invalid)")
        }
        let response = HTTPResponse(status: 206, headers: ["Content-Range": "bytes 10-19/20"])
        #expect(response.contentRange == ContentRange(range: 10...19, completeLength: 20))
        #expect(response.isSuccess)
        #expect(!HTTPResponse(status: 416).isSuccess)
    }

    @Test func errorsDescribeTheRequest() throws {
        let url = try #require(URL(string: "https://station.example/profile"))
        let error = TransportError(.timedOut, method: .get, url: url, message: "no bytes for 120 s", code: 28)
        #expect(error.description == "timedOut for GET https://station.example/profile: no bytes for 120 s (code 28)")
        // The limit is a detail of the kind: it does not take part in equality, and it prints.
        let tooLarge = TransportError.Kind.responseTooLarge(limit: 5)
        #expect(tooLarge == .responseTooLarge && tooLarge == .responseTooLarge(limit: 6) && tooLarge != .timedOut)
        #expect(tooLarge.limit == 5 && TransportError.Kind.responseTooLarge.limit == nil)
        #expect("\(tooLarge)" == "responseTooLarge(limit: 5)" && "\(TransportError.Kind.pinMismatch)" == "pinMismatch")
    }

    @Test func requestBodyLengths() {
        #expect(HTTPRequestBody.none.knownLength == 0)
        #expect(HTTPRequestBody.bytes(Data(count: 7)).knownLength == 7)
        #expect(HTTPRequestBody.file(URL(fileURLWithPath: "/tmp/x")).knownLength == nil)
        #expect(HTTPRequestBody.stream(HTTPBodyStream(length: 9, next: { nil })).knownLength == 9)
        #expect(HTTPRequestBody.stream(HTTPBodyStream(length: nil, next: { nil })).knownLength == nil)
        #expect(HTTPResponseBody.data(Data([1])).data == Data([1]))
        #expect(HTTPResponseBody.file(URL(fileURLWithPath: "/tmp/x"), byteCount: 1).data == nil)
        #expect(!ResponseDestination.memory().isStreaming)
        #expect(ResponseDestination.stream.isStreaming)
        #expect(ResponseDestination.file(URL(fileURLWithPath: "/tmp/x")).isStreaming)
    }
}
