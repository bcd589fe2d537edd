@testable import CipherStationEmulator
import Foundation
import Manifest
import StationEmulator
import Testing
import OrderedJSON
import ContentAddressing

/// The emulated IPFS gateway, fault injection, endpoint mobility and persistence.
@Suite("Emulator: gateway, faults, endpoint mobility, persistence")
struct GatewayAndFaultTests {
    static func gateway(_ harness: Harness) throws -> RawHTTPClient {
        RawHTTPClient(port: UInt16(try #require(harness.emulator.gatewayURL?.port)))
    }

    @Test func gatewayServesFilesWithRangesAndPublicJSONByName() throws {
        let harness = try Harness()
        let device = try harness.pair()
        let posted = try harness.post(device)
        let gateway = try Self.gateway(harness)
        var response = try gateway.send(method: "GET", path: "/ipfs/\(posted.cid)")
        #expect(response.status == 200 && Data(response.body) == harness.emulator.block(posted.cid))
        response = try gateway.send(method: "GET", path: "/ipfs/\(posted.cid)", headers: [("Range", "bytes=0-23")])
        #expect(response.status == 206 && response.body.count == 24)
        response = try gateway.send(method: "GET", path: "/ipfs/QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4",
                                    headers: [("Cache-Control", "only-if-cached")])
        #expect(response.status == 412)

        response = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)")
        #expect(response.status == 200)
        let text = String(decoding: response.body, as: UTF8.self)
        // json.dumps(indent=2): two-space indent, ", " never used, keys in public.json order.
        #expect(text.hasPrefix("{\n  \"alias\": null,\n  \"uid\": \"\(harness.uid)\",\n"))
        let document = try #require(try WireJSON.parse(response.body).objectValue)
        #expect(document.keys == ["alias", "uid", "mlkem_public_key", "mldsa_public_key", "endpoint", "manifest_pointer", "followers_cid",
                                  "following_cid", "follow_decoder_envelopes_cid", "ipfs_peer_id", "ipns_name"])
        #expect(document["manifest_pointer"] == (try harness.profile()["manifest_cid"]))
        #expect(try gateway.send(method: "GET", path: "/ipns/k51nobody").status == 404)
    }

    @Test func identityCIDsAreRefusedAndTheGatewayStaysUp() throws {
        let harness = try Harness()
        let gateway = try Self.gateway(harness)
        let inlined = CID(v1: Multicodec.raw, multihash: try Multihash(code: Multihash.identity, digest: Array("hello".utf8)))
        // The second carries a File node whose block sizes overflow a UInt64 when summed.
        for cid in [inlined.description, "bafyaagqkdaeaeih77777777777776aja77777777777777yb"] {
            let response = try gateway.send(method: "GET", path: "/ipfs/\(cid)")
            #expect(response.status == 400, "\(cid)")
            #expect(String(decoding: response.body, as: UTF8.self).contains("identity"))
        }
        #expect(try gateway.send(method: "GET", path: "/ipns/k51nobody").status == 404, "the gateway still answers")
    }

    @Test func injectedFailuresLatencyAndBrokenBodies() throws {
        let harness = try Harness()
        harness.emulator.faults.failNextRequests(2, status: 502)
        #expect(try harness.send("GET", "/health").status == 502)
        let second = try harness.send("GET", "/health")
        #expect(second.status == 502 && second.text == #"{"detail":"injected fault"}"#)
        #expect(try harness.send("GET", "/health").status == 200)

        harness.emulator.faults.setLatency(0.3)
        let started = Date()
        #expect(try harness.send("GET", "/health").status == 200)
        #expect(Date().timeIntervalSince(started) >= 0.3)
        harness.emulator.faults.setLatency(0)

        harness.emulator.faults.closeNextResponsesMidBody(1)
        #expect(throws: (any Error).self) { try harness.send("GET", "/profile") }
        #expect(try harness.send("GET", "/profile").status == 200)
    }

    @Test func movingTheStationRepublishesTheEndpoint() throws {
        let harness = try Harness(publishesEndpoint: true)
        let oldURL = try #require(harness.emulator.stationURL)
        let newURL = try harness.emulator.moveStation()
        #expect(newURL != oldURL)
        let old = RawHTTPClient(port: UInt16(oldURL.port ?? 0))
        #expect(throws: (any Error).self) { try old.send(method: "GET", path: "/health") }
        let moved = RawHTTPClient(port: UInt16(newURL.port ?? 0))
        #expect(try moved.send(method: "GET", path: "/health").status == 200)
        let gateway = try Self.gateway(harness)
        let document = try WireJSON.parse(try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.peerID)").body)
        #expect(document["endpoint"]?.stringValue == newURL.absoluteString)
    }

    @Test func stateSurvivesARestartFromTheDataDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try Harness(dataDirectory: directory)
        let device = try first.pair()
        let posted = try first.post(device)
        let uid = first.uid
        first.emulator.stop()

        let second = try Harness(dataDirectory: directory)
        #expect(second.uid == uid)
        #expect(second.emulator.manifest.entry(forPostCID: posted.cid) != nil)
        // The paired device still signs in, and the post's bytes are still there.
        let response = try second.signed(device, "GET", "/content/\(posted.cid)")
        #expect(response.status == 200 && Data(response.body) == first.emulator.block(posted.cid))
        #expect(try second.profile()["ipns_name"]?.stringValue == first.emulator.ipnsName)
        // The IPNS record survives too: same key, the last sequence, still served.
        let record = try Self.gateway(second).send(method: "GET", path: "/ipns/\(second.emulator.ipnsName)?format=ipns-record")
        #expect(record.status == 200)
        let verified = try IPNSRecord.verified(record.body, name: try PeerID(second.emulator.ipnsName), at: Date())
        #expect(verified.sequence == first.emulator.ipnsSequence)
    }

    @Test func signedIPNSRecordsWithRisingSequenceAndInjectedOnes() throws {
        let clock = ManualClock(start: 1_900_000_000)
        let harness = try Harness(clock: clock)
        let gateway = try Self.gateway(harness)
        let name = try PeerID(harness.emulator.ipnsName)
        harness.emulator.setEndpoint("https://station.example")
        let first = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)?format=ipns-record")
        #expect(first.status == 200)
        #expect(first.headers.first { $0.0.lowercased() == "content-type" }?.1 == IPNSRecord.mediaType)
        let firstRecord = try IPNSRecord.verified(first.body, name: name, at: Date(timeIntervalSince1970: clock.now()))
        // Valid for Kubo's 48 hours on the emulator's clock.
        #expect(firstRecord.validity == Date(timeIntervalSince1970: 1_900_000_000 + 48 * 3600))
        let cid = try #require(firstRecord.ipfsCID)
        #expect(Data(try gateway.send(method: "GET", path: "/ipfs/\(cid)").body) == harness.emulator.publishedPublicDocument)

        harness.emulator.setEndpoint("https://moved.example")
        // The Accept header asks for the record as well as the query does.
        let second = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)",
                                      headers: [("Accept", IPNSRecord.mediaType)])
        let secondRecord = try IPNSRecord.verified(second.body, name: name, at: Date(timeIntervalSince1970: clock.now()))
        #expect(secondRecord.sequence == firstRecord.sequence + 1)
        #expect(secondRecord.sequence == harness.emulator.ipnsSequence)
        #expect(harness.emulator.publishedIPNSRecords.last == Data(second.body))

        // Injected: a forgery, an expired record, a replayed older one.
        let document = Data(#"{"uid":"x"}"#.utf8)
        harness.emulator.serveIPNSRecord(pointingAt: document, forged: true)
        let forged = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)?format=ipns-record")
        #expect(throws: IPNSRecordError.invalidSignature) { try IPNSRecord.verified(forged.body, name: name, at: Date()) }
        // The plain path follows the injected record, as a gateway that resolved it would.
        #expect(Data(try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)").body) == document)
        harness.emulator.serveIPNSRecord(pointingAt: document, validity: Date(timeIntervalSince1970: clock.now() - 1))
        let expired = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)?format=ipns-record")
        #expect(throws: IPNSRecordError.self) {
            try IPNSRecord.verified(expired.body, name: name, at: Date(timeIntervalSince1970: clock.now()))
        }
        harness.emulator.serveIPNSRecord(try #require(harness.emulator.publishedIPNSRecords.first))
        let replayed = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)?format=ipns-record")
        #expect(try IPNSRecord.verified(replayed.body, name: name, at: Date(timeIntervalSince1970: clock.now())).sequence
                    < harness.emulator.ipnsSequence)
        harness.emulator.faults.reset()
        let back = try gateway.send(method: "GET", path: "/ipns/\(harness.emulator.ipnsName)?format=ipns-record")
        #expect(Data(back.body) == harness.emulator.publishedIPNSRecords.last)
    }
}
