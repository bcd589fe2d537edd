import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP request without its body: method, absolute URL and header fields.
///
/// The body travels separately as an `HTTPRequestBody`, so one request value can be signed, logged
/// or retried without copying a large body.
public struct HTTPRequest: Sendable, Hashable {
    /// The request method.
    public var method: HTTPMethod
    /// The absolute `http` or `https` URL, including any query string.
    public var url: URL
    /// The header fields, sent in this order with this spelling.
    ///
    /// The transport owns message framing: it sets `Content-Length` from the body (chunked
    /// encoding only for an app's own unsized stream; every body the SDK sends has a known
    /// length), so those two fields are ignored here.
    public var headers: HTTPHeaders

    /// Creates a request.
    public init(method: HTTPMethod, url: URL, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.url = url
        self.headers = headers
    }

    /// Checks what a transport needs before it sends anything: an `http` or `https` URL with a host,
    /// a method that is an HTTP token, header names that are tokens, and header values without
    /// CR, LF or NUL (which would let a value inject extra header lines).
    ///
    /// - Throws: `TransportError` with kind `.invalidRequest` naming the first problem found.
    public func validate() throws {
        func fail(_ message: String) -> TransportError {
            TransportError(.invalidRequest, method: method, url: url, message: message)
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw fail("the URL scheme must be http or https")
        }
        guard let host = url.host, !host.isEmpty else { throw fail("the URL has no host") }
        guard Self.isToken(method.rawValue) else { throw fail("the method is not an HTTP token") }
        for field in headers {
            guard Self.isToken(field.name) else {
                throw fail("header name \(field.name.debugDescription) is not an HTTP token")
            }
            guard !Self.containsLineBreakOrNUL(field.value) else {
                throw fail("the value of header \(field.name) contains CR, LF or NUL")
            }
        }
    }

    /// Whether `text` holds CR, LF or NUL. Scans contiguous UTF-8 directly: signature headers are
    /// 4.4 KB and this runs for every request.
    static func containsLineBreakOrNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            return memchr(base, 0x0D, bytes.count) != nil || memchr(base, 0x0A, bytes.count) != nil
                || memchr(base, 0x00, bytes.count) != nil
        }
    }

    /// RFC 9110 §5.6.2 `token`: one or more visible ASCII characters other than delimiters.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "A")...UInt8(ascii: "Z"):
                true
            default:
                "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
