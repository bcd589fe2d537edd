import Envelope
import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import StationEmulator
import Transport
import OrderedJSON

/// The soak: `clients` paired owner devices post (client-side encrypted) and rewrap against an
/// emulator served on loopback for `seconds`, each on its own thread with its own keep-alive
/// connection; then every post must be in the manifest, once, with an envelopes document the
/// station's key opens, and the published manifest must match.
struct Soak {
    let clients: Int
    let seconds: Double

    struct Report {
        var requests = 0
        var failures: [String] = []
        var posts = 0
        var lostPosts = 0
        var manifestProblems: [String] = []
        var elapsed: Double = 0

        var passed: Bool { failures.isEmpty && lostPosts == 0 && manifestProblems.isEmpty && posts > 0 }

        var summary: String {
            var lines = [
                String(format: "soak: %d requests in %.1f s (%.1f requests/s), %d failures, %d posts, %d lost, manifest %@",
                       requests, elapsed, Double(requests) / max(elapsed, 0.001), failures.count, posts, lostPosts,
                       manifestProblems.isEmpty ? "consistent" : "INCONSISTENT"),
            ]
            lines += failures.prefix(10).map { "failure: \($0)" }
            lines += manifestProblems.prefix(10).map { "manifest: \($0)" }
            lines.append(passed ? "soak: PASS" : "soak: FAIL")
            return lines.joined(separator: "\n")
        }
    }

    private struct Device: @unchecked Sendable {
        let signer: RequestSigner
        let mlkem: MLKEM768.PrivateKey
        let deviceUID: String
    }

    private final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var requests = 0
        var failures: [String] = []
        var posted: [String] = []

        func record(requests count: Int = 1, failure: String? = nil, posted cid: String? = nil) {
            lock.lock()
            defer { lock.unlock() }
            requests += count
            if let failure { failures.append(failure) }
            if let cid { posted.append(cid) }
        }
    }

    func run() throws -> Report {
        let emulator = try StationEmulator()
        let url = try emulator.start()
        defer { emulator.stop() }
        guard let port = url.port.map(UInt16.init) else { throw SoakError("no port") }
        let setup = RawHTTPClient(port: port)
        let profile = try json(setup.send(method: "GET", path: "/profile"))
        guard let uid = profile["uid"]?.stringValue, let stationKeyHex = profile["mlkem_public_key"]?.stringValue else {
            throw SoakError("no uid in /profile")
        }
        let stationKey = try MLKEM768.PublicKey(rawRepresentation: Hex.decode(stationKeyHex))

        var devices: [Device] = []
        for index in 0..<clients {
            let mlkem = MLKEM768.PrivateKey(), mldsa = MLDSA65.PrivateKey()
            let deviceUID = "soak-\(index)-\(Hex.encode(SecureRandom.bytes(count: 4)))"
            let start = try JSON.body(["device_uid": .string(deviceUID),
                                       "mlkem_public_key": .string(Hex.encode(mlkem.publicKey.rawRepresentation)),
                                       "mldsa_public_key": .string(Hex.encode(mldsa.publicKey.rawRepresentation))])
            let started = try json(setup.send(method: "POST", path: "/delegate/start", headers: [("Content-Type", "application/json")], body: start))
            guard let pairingID = started["pairing_id"]?.stringValue, let pin = emulator.log.latestPIN else {
                throw SoakError("pairing did not start")
            }
            let confirm = try JSON.body(["pairing_id": .string(pairingID), "pin": .string(pin)])
            let confirmed = try json(setup.send(method: "POST", path: "/delegate/confirm", headers: [("Content-Type", "application/json")], body: confirm))
            guard confirmed["device_uid"]?.stringValue == deviceUID else { throw SoakError("pairing failed: \(confirmed)") }
            devices.append(Device(signer: RequestSigner(identity: SigningIdentity(uid: uid, deviceUID: deviceUID, privateKey: mldsa)),
                                  mlkem: mlkem, deviceUID: deviceUID))
        }

        let tally = Tally()
        let began = Date()
        let deadline = began.addingTimeInterval(seconds)
        let group = DispatchGroup()
        for device in devices {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                Self.clientLoop(device: device, uid: uid, stationKey: stationKey, port: port, deadline: deadline, tally: tally)
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.wait()

        var report = Report()
        report.elapsed = Date().timeIntervalSince(began)
        tally.lock.lock()
        report.requests = tally.requests
        report.failures = tally.failures
        let posted = tally.posted
        tally.lock.unlock()
        report.posts = posted.count
        check(emulator: emulator, posted: posted, uid: uid, report: &report)
        return report
    }

    private func check(emulator: StationEmulator, posted: [String], uid: String, report: inout Report) {
        let manifest = emulator.manifest
        let entries = manifest.allPosts.map(\.entry)
        let listed = Set(entries.map(\.postCID))
        report.lostPosts = posted.filter { !listed.contains($0) }.count
        if entries.count != listed.count { report.manifestProblems.append("\(entries.count - listed.count) duplicate entries") }
        if entries.count != posted.count { report.manifestProblems.append("\(entries.count) entries for \(posted.count) posts") }
        for entry in entries {
            guard let envelopesCID = entry.envelopesCID, let bytes = emulator.block(envelopesCID),
                  let set = try? WireJSON.decode(EnvelopeSet.self, from: bytes), set.postCID == entry.postCID,
                  set.envelope(for: uid) != nil, emulator.block(entry.postCID) != nil else {
                report.manifestProblems.append("entry \(entry.postCID) has no usable envelopes or bytes")
                continue
            }
        }
        // The published manifest (what followers read) must be the same document.
        let setup = RawHTTPClient(port: UInt16(emulator.stationURL?.port ?? 0))
        if let profile = try? json(setup.send(method: "GET", path: "/profile")), let cid = profile["manifest_cid"]?.stringValue,
           let published = emulator.block(cid) {
            if published != Data((try? WireJSON.encode(manifest)) ?? []) {
                report.manifestProblems.append("the published manifest differs from the station's")
            }
        } else {
            report.manifestProblems.append("no published manifest")
        }
    }

    private static func clientLoop(device: Device, uid: String, stationKey: MLKEM768.PublicKey, port: UInt16, deadline: Date,
                                   tally: Tally) {
        let client = RawHTTPClient(port: port)
        var iteration = 0
        while Date() < deadline {
            iteration += 1
            let label = "\(device.deviceUID)#\(iteration)"
            do {
                // Post: the client encrypts, the station keeps the bytes.
                let key = SecureRandom.symmetricKey()
                let plaintext = SecureRandom.bytes(count: 512 + Int(SecureRandom.bytes(count: 1)[0]) * 8)
                let file = try SecretBox.seal(plaintext, using: key)
                let metadata = try SecretBox.seal(Array(#"{"i":\#(iteration)}"#.utf8), using: key)
                var form = MultipartForm()
                try form.addFile("file", filename: "blob.bin", data: file)
                try form.addField("client", value: "soak")
                try form.addField("audience_mode", value: iteration % 2 == 0 ? "all" : "self")
                try form.addField("self_envelope", value: Envelope.seal(key, to: stationKey))
                try form.addField("metadata", value: Hex.encode(metadata))
                let body = [UInt8](try form.encoded())
                let signed = try device.signer.sign(method: "POST", path: "/post", body: body)
                let posted = try client.send(method: "POST", path: "/post",
                                             headers: signed.fields.map { ($0.name, $0.value) } + [("Content-Type", form.contentType)],
                                             body: body)
                tally.record()
                guard posted.status == 200, let cid = try JSON.object(posted.body)["cid"]?.stringValue else {
                    tally.record(requests: 0, failure: "\(label) POST /post → \(posted.status) \(String(decoding: posted.body, as: UTF8.self))")
                    continue
                }
                tally.record(requests: 0, posted: cid)

                // Rewrap: the envelope must open to the same key.
                let rewrapBody = try JSON.body(["uid": .string(uid), "device_uid": .string(device.deviceUID), "post_cid": .string(cid),
                                                "envelopes_cid": .null])
                let rewrapHeaders = try device.signer.sign(method: "POST", path: "/rewrap", body: rewrapBody)
                let rewrapped = try client.send(method: "POST", path: "/rewrap",
                                                headers: rewrapHeaders.fields.map { ($0.name, $0.value) } + [("Content-Type", "application/json")],
                                                body: rewrapBody)
                tally.record()
                guard rewrapped.status == 200,
                      let envelope = try JSON.object(rewrapped.body)["result"]?["envelope"]?.stringValue,
                      try Envelope.open(envelope, with: device.mlkem) == key else {
                    tally.record(requests: 0, failure: "\(label) POST /rewrap → \(rewrapped.status) \(String(decoding: rewrapped.body, as: UTF8.self))")
                    continue
                }

                // Every third round, fetch the bytes back and decrypt them.
                if iteration % 3 == 0 {
                    let path = "/content/\(cid)"
                    let headers = try device.signer.sign(method: "GET", path: path, body: [UInt8]())
                    let content = try client.send(method: "GET", path: path, headers: headers.fields.map { ($0.name, $0.value) })
                    tally.record()
                    guard content.status == 200, try [UInt8](SecretBox.open(content.body, using: key)) == plaintext else {
                        tally.record(requests: 0, failure: "\(label) GET /content → \(content.status)")
                        continue
                    }
                }
            } catch {
                tally.record(requests: 0, failure: "\(label): \(error)")
            }
        }
    }

    private func json(_ response: RawHTTPClient.Response) throws -> JSONObject {
        guard response.status == 200 else { throw SoakError("HTTP \(response.status): \(String(decoding: response.body, as: UTF8.self))") }
        return try JSON.object(response.body)
    }
}

struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum JSON {
    static func body(_ object: JSONObject) throws -> [UInt8] { WireJSON.serialize(.object(object)) }

    static func object(_ bytes: [UInt8]) throws -> JSONObject {
        guard let object = try WireJSON.parse(bytes).objectValue else { throw SoakError("not a JSON object") }
        return object
    }
}
