import Foundation
import Signing
import StationClient
import Transport

// Step 2 of the seed guide: sign every request.
//
// Owner endpoints need an ML-DSA-65 signature over a seven-field canonical string, carried in
// six x-cipher-* headers. StationClient does this for every call it makes, and for a request of
// your own with signedHeaders(method:path:body:) (the device's private key never leaves the SDK);
// here we look at the parts, then show that the station rejects a signature made for another path.

enum SignRequest {
    static let usage = ExampleUsage(name: "sign-request", summary: """
        Signs a request of its own (signedHeaders): prints the canonical string's fields and the six
        x-cipher-* headers, sends it pinned as the client's own requests are, and shows a signature
        made for another path refused.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let client = try await station.pair(deviceName: "signer")

            // A GET signs the SHA-256 of an empty body; the path carries no query string or host.
            let headers = try await client.signedHeaders(method: "GET", path: "/followers", body: Data())
            let canonical = CanonicalRequest(method: "GET", path: "/followers", uid: headers.uid, deviceUID: headers.device,
                                             timestamp: headers.timestamp, nonce: headers.nonce, bodySHA256: headers.bodySHA256)
            print("canonical string fields: \(canonical.string.split(separator: "\n", omittingEmptySubsequences: false).count)")
            print("body sha256 (empty body): \(headers.bodySHA256)")
            for (name, value) in headers.fields { print("  \(name): \(value.prefix(24))\(value.count > 24 ? "…" : "")") }

            func send(_ path: String, signedFor signedPath: String) async throws -> Int {
                let signed = try await client.signedHeaders(method: "GET", path: signedPath, body: Data())
                var request = HTTPRequest(method: .get, url: station.endpoint.appendingPathComponent(String(path.dropFirst())))
                for (name, value) in signed.fields { request.headers.add(name, value: value) }
                // Sent with the pins the client's own requests carry: a self-signed station is reached by its key.
                return try await station.send(request, pinnedAs: client).status
            }
            print("GET /followers, signed for /followers: HTTP \(try await send("/followers", signedFor: "/followers"))")
            print("GET /followers, signed for /following: HTTP \(try await send("/followers", signedFor: "/following"))")
        }
    }
}
