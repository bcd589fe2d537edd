import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport

/// The status and header fields of a response, read from `HTTPURLResponse`.
struct ResponseHead: Sendable {
    var status: Int
    var headers: HTTPHeaders
    /// The `Content-Length` the server announced, when it can be trusted for the body's length.
    var announcedLength: Int64?

    init(_ response: HTTPURLResponse, method: HTTPMethod) {
        status = response.statusCode
        // URLSession keeps header fields in a dictionary: the server's order is gone and repeated
        // fields arrive joined. Sorting makes the order at least stable.
        var fields: [HTTPHeaders.Field] = []
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String else { continue }
            fields.append(HTTPHeaders.Field(name: name, value: (value as? String) ?? "\(value)"))
        }
        fields.sort { $0.name.lowercased() < $1.name.lowercased() }
        headers = HTTPHeaders(fields)
        if method == .head || status == 204 || status == 304 {
            announcedLength = 0
        } else if !headers.contains("Transfer-Encoding"), let value = headers["Content-Length"], let length = Int64(value),
                  length >= 0 {
            announcedLength = length
        } else {
            announcedLength = nil
        }
    }
}
