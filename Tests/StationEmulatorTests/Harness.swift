@testable import CipherStationEmulator
import Envelope
import Foundation
import LoopbackHTTP
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import StationEmulator
import Testing
import Transport
import OrderedJSON

/// A paired owner device (or a follower's device) as a test client holds it.
struct TestDevice: @unchecked Sendable {
    let uid: String
    let deviceUID: String
    let mlkem: MLKEM768.PrivateKey
    let mldsa: MLDSA65.PrivateKey

    var mlkemHex: String { Hex.encode(mlkem.publicKey.rawRepresentation) }
    var mldsaHex: String { Hex.encode(mldsa.publicKey.rawRepresentation) }

    init(uid: String, deviceUID: String, mlkem: MLKEM768.PrivateKey = MLKEM768.PrivateKey(),
         mldsa: MLDSA65.PrivateKey = MLDSA65.PrivateKey()) {
        self.uid = uid
        self.deviceUID = deviceUID
        self.mlkem = mlkem
        self.mldsa = mldsa
    }

    func signer(clock: @escaping @Sendable () -> Int64 = RequestSigner.systemClock) -> RequestSigner {
        RequestSigner(identity: SigningIdentity(uid: uid, deviceUID: deviceUID, privateKey: mldsa), clock: clock)
    }
}

/// A response as it came off the wire.
struct RawResponse {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }

    /// The body parsed with key order kept.
    func object() throws -> JSONObject {
        try #require(try WireJSON.parse(body).objectValue, "not a JSON object: \(text)")
    }
}

/// An emulator served on loopback, with a raw HTTP client and helpers to pair, sign and post.
final class Harness: @unchecked Sendable {
    let emulator: StationEmulator
    let clock: ManualClock?
    private let client: RawHTTPClient
    private let lock = NSLock()

    init(clock: ManualClock? = nil, autoAccept: Bool = false, dataDirectory: URL? = nil, publishesEndpoint: Bool = false,
         losesResharedContent: Bool = false, maximumUploadSize: Int = 104_857_600,
         serverLimits: LoopbackHTTPServer.Limits = LoopbackHTTPServer.Limits()) throws {
        self.clock = clock
        emulator = try StationEmulator(configuration: .init(
            dataDirectory: dataDirectory, clock: clock ?? SystemClock(), maximumUploadSize: maximumUploadSize,
            autoAcceptFollows: autoAccept, publishesEndpoint: publishesEndpoint, losesResharedContent: losesResharedContent,
            serverLimits: serverLimits))
        let url = try emulator.start()
        client = RawHTTPClient(port: UInt16(url.port ?? 0))
    }

    deinit { emulator.stop() }

    var uid: String { emulator.uid }

    var now: Int64 { Int64((clock?.now() ?? Date().timeIntervalSince1970).rounded(.down)) }

    /// Sends exactly these bytes (plus `Host` and `Content-Length`) and returns what came back.
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> RawResponse {
        lock.lock()
        defer { lock.unlock() }
        let response = try client.send(method: method, path: path, headers: headers, body: body)
        return RawResponse(status: response.status, headers: response.headers, body: response.body)
    }

    func json(_ method: String, _ path: String, _ object: JSONObject) throws -> RawResponse {
        try send(method, path, headers: [("Content-Type", "application/json")], body: WireJSON.serialize(.object(object)))
    }

    /// Sends a request signed by `device` (over `signedPath`, by default the path without query).
    func signed(_ device: TestDevice, _ method: String, _ path: String, body: [UInt8] = [], contentType: String? = nil,
                signedPath: String? = nil, extraHeaders: [(String, String)] = []) throws -> RawResponse {
        let clock = self.clock
        let signer = device.signer(clock: { Int64((clock?.now() ?? Date().timeIntervalSince1970).rounded(.down)) })
        let headers = try signer.sign(method: method, path: signedPath ?? String(path.split(separator: "?")[0]), body: body)
        var fields = headers.fields.map { ($0.name, $0.value) }
        if let contentType { fields.append(("Content-Type", contentType)) }
        return try send(method, path, headers: fields + extraHeaders, body: body)
    }

    func signedJSON(_ device: TestDevice, _ path: String, _ object: JSONObject) throws -> RawResponse {
        try signed(device, "POST", path, body: WireJSON.serialize(.object(object)), contentType: "application/json")
    }

    /// Pairs a new owner device through `/delegate/start` and `/delegate/confirm` with the PIN from the log.
    func pair(deviceUID: String = "device-\(UUID().uuidString.prefix(8))") throws -> TestDevice {
        let device = TestDevice(uid: uid, deviceUID: deviceUID)
        let started = try json("POST", "/delegate/start", ["device_uid": .string(deviceUID), "mlkem_public_key": .string(device.mlkemHex),
                                                           "mldsa_public_key": .string(device.mldsaHex)])
        #expect(started.status == 200, "\(started.text)")
        let pairingID = try #require(try started.object()["pairing_id"]?.stringValue)
        let pin = try #require(emulator.log.latestPIN)
        let confirmed = try json("POST", "/delegate/confirm", ["pairing_id": .string(pairingID), "pin": .string(pin)])
        #expect(confirmed.status == 200, "\(confirmed.text)")
        return device
    }

    /// `GET /profile` as an object.
    func profile() throws -> JSONObject { try send("GET", "/profile").object() }

    struct Posted {
        let cid: String
        let key: SymmetricKey
        let plaintext: [UInt8]
        let response: RawResponse
    }

    /// Posts `plaintext` encrypted client-side, as WIRE_NOTES §3 describes.
    func post(_ device: TestDevice, plaintext: [UInt8] = Array("hello cipher station".utf8), mode: String? = nil,
              uids: String? = nil, client: String? = "interop", metadata: String? = #"{"caption":"hi"}"#) throws -> Posted {
        let key = SecureRandom.symmetricKey()
        let stationKey = try MLKEM768.PublicKey(rawRepresentation: Hex.decode(emulator.mlkemPublicKeyHex))
        var form = try MultipartForm(boundary: "emulator-test-boundary")
        try form.addFile("file", filename: "blob.bin", data: SecretBox.seal(plaintext, using: key))
        if let metadata { try form.addField("metadata", value: Hex.encode(SecretBox.seal(Array(metadata.utf8), using: key))) }
        if let client { try form.addField("client", value: client) }
        if let mode { try form.addField("audience_mode", value: mode) }
        if let uids { try form.addField("audience_uids", value: uids) }
        try form.addField("self_envelope", value: Envelope.seal(key, to: stationKey))
        let response = try signed(device, "POST", "/post", body: [UInt8](form.encoded()), contentType: form.contentType)
        let cid = (try? response.object()["cid"]?.stringValue) ?? ""
        return Posted(cid: cid, key: key, plaintext: plaintext, response: response)
    }

    /// A multipart body built from `fields` (name, value, filename?).
    static func form(_ parts: [(String, [UInt8], String?)]) throws -> (body: [UInt8], contentType: String) {
        var form = try MultipartForm(boundary: "emulator-test-boundary")
        for (name, value, filename) in parts {
            if let filename { try form.addFile(name, filename: filename, data: Data(value)) } else {
                try form.addField(name, value: String(decoding: value, as: UTF8.self))
            }
        }
        return ([UInt8](try form.encoded()), form.contentType)
    }

    /// The keys of a JSON object, in order.
    static func keys(_ value: JSONValue?) -> [String] { value?.objectValue?.keys ?? [] }
}
