import Envelope
import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
@testable import StationClient
import Transport
import OrderedJSON

/// Forwards to another transport and records each request.
struct RecordingTransport: WrappingTransport {
    let base: any HTTPTransport
    let requests = Locked<[HTTPRequest]>([])

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        requests.withLock { $0.append(request) }
        return try await base.send(request, body: body, options: options)
    }
}

/// Tampers with answers on their way to the client: flips a bit in a chosen post's rewrapped envelope.
final class TamperingTransport: WrappingTransport, @unchecked Sendable {
    let base: any HTTPTransport
    private let targets = Locked<Set<String>>([])

    init(base: any HTTPTransport) { self.base = base }

    func corruptRewrap(of postCID: String) { targets.withLock { _ = $0.insert(postCID) } }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        var response = try await base.send(request, body: body, options: options)
        guard request.url.path == "/rewrap", let data = response.body.data,
              var object = try? WireJSON.parse(data).objectValue, var result = object["result"]?.objectValue,
              let cid = result["post_cid"]?.stringValue, targets.withLock({ $0.contains(cid) }),
              let envelope = result["envelope"]?.stringValue, var bytes = try? Hex.decode(envelope) else { return response }
        bytes[bytes.count - 1] ^= 1
        result["envelope"] = .string(Hex.encode(bytes))
        object["result"] = .object(result)
        response.body = .data(Data(WireJSON.serialize(.object(object))))
        return response
    }
}

/// Posts with hand-made fields, as another (buggy) client might.
struct RawPoster {
    let credentials: DeviceCredentials
    let transport: any HTTPTransport

    func post(file: Data, metadataHex: String, namespace: String) async throws -> String {
        try await post(file: file, namespace: namespace) { _ in metadataHex }
    }

    /// Posts `file` with the metadata field `metadataHex` makes from the post key.
    func post(file: Data, namespace: String, metadataHex: (SymmetricKey) throws -> String) async throws -> String {
        let key = SymmetricKey(randomByteCount: 32)
        let sealed = try SecretBox.seal(file, using: key)
        var form = MultipartForm()
        try form.addFile("file", filename: "blob.bin", data: sealed)
        try form.addField("metadata", value: try metadataHex(key))
        try form.addField("client", value: namespace)
        try form.addField("audience_mode", value: "self")
        try form.addField("self_envelope", value: try Envelope.seal(key, to: credentials.stationKEMPublicKey()))
        let body = try form.encoded()
        let signer = RequestSigner(identity: SigningIdentity(uid: credentials.stationUID, deviceUID: credentials.deviceUID,
                                                             signingKey: credentials.signingPrivateKey))
        var request = HTTPRequest(method: .post, url: credentials.endpoint.appendingPathComponent("post"))
        for field in try signer.sign(method: "POST", path: "/post", body: body).fields { request.headers.add(field.name, value: field.value) }
        request.headers.add("Content-Type", value: form.contentType)
        let response = try await transport.send(request, body: .bytes(body))
        return try WireJSON.decode(PostResponse.self, from: [UInt8](response.body.data ?? Data())).postCID
    }
}

/// Holds every `POST /post` until the calling task is cancelled, as a transfer still on the
/// wire, and keeps each one's options (its progress handler among them) for as long as this
/// transport lives, as a transport whose transfer ends on its own thread after the caller got its
/// error (libcurl's engine does). Everything else goes to `base`.
final class HoldingPostTransport: WrappingTransport, @unchecked Sendable {
    let base: any HTTPTransport
    /// One element each time a `POST /post` arrives (and is then held).
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation
    /// The options of every `POST /post` received.
    let kept = Locked<[TransferOptions]>([])

    init(base: any HTTPTransport) {
        self.base = base
        (arrivals, arrived) = AsyncStream.makeStream()
    }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        guard request.method == .post, request.url.path == "/post" else {
            return try await base.send(request, body: body, options: options)
        }
        kept.withLock { $0.append(options) }
        arrived.yield()
        // Until the caller is cancelled: nothing else ends this wait.
        while !Task.isCancelled { try? await Task.sleep(nanoseconds: 3_600_000_000_000) }
        throw TransportError(.cancelled, method: request.method, url: request.url, message: "the transfer was cancelled")
    }
}
