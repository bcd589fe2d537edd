import ClassicalCrypto
import ContentAddressing
import Envelope
import Foundation
import SHA2
import Manifest
import PQCrypto
@testable import StationClient
import Testing
import Transport

/// The station's side of a submission, scripted: each `POST /post` takes the next answer, and a
/// look in the manifest finds the post only when told to.
final class ScriptedStation: PostSubmitting {
    enum Answer: Sendable {
        /// The station stored the post as this CID (`nil`: the CID sent).
        case stored(String?)
        case status(Int, String)
        case unreachable
    }

    private struct State {
        var answers: [Answer]
        var bodies: [[UInt8]] = []
        var finds = 0
    }

    private let state: Locked<State>
    private let inManifest: Bool

    init(_ answers: [Answer], inManifest: Bool = false) {
        state = Locked(State(answers: answers))
        self.inManifest = inManifest
    }

    /// The bodies sent, in order.
    var bodies: [[UInt8]] { state.withLock { $0.bodies } }
    var finds: Int { state.withLock { $0.finds } }

    func sendPost(_ body: StationCall.Body, options: TransferOptions, operation: String) async throws -> HTTPResponse {
        guard case .multipart(let form, let digest) = body else { throw StationClientError(.refused, operation: operation, message: "not a form") }
        let sent = [UInt8](try form.encoded())
        // The digest signed is the body's.
        guard SHA256.hash(data: sent) == digest else { return HTTPResponse(status: 401, body: .data(Data(#"{"detail":"bad body hash"}"#.utf8))) }
        let answer = state.withLock { state in
            state.bodies.append(sent)
            return state.answers.isEmpty ? Answer.unreachable : state.answers.removeFirst()
        }
        switch answer {
        case .stored(let cid):
            let json = #"{"status":"post_ok","cid":"\#(cid ?? Self.fileCID(of: sent))","envelopes_cid":"QmY2b52WrNZ8SSebVA1u5tbzLsoXQMYwLozZ6AnNH4Qe7c","audience_mode":"self","audience_uids":null,"followers_raw":1,"followers_used":1,"manifest_posts":1}"#
            return HTTPResponse(status: 200, body: .data(Data(json.utf8)))
        case .status(let status, let detail):
            return HTTPResponse(status: status, body: .data(Data(#"{"detail":"\#(detail)"}"#.utf8)))
        case .unreachable:
            throw StationClientError(.unreachable, operation: operation, message: "connection reset")
        }
    }

    func findPost(_ postCID: String, namespace: String) async throws -> PublishedPost? {
        state.withLock { $0.finds += 1 }
        return inManifest ? PublishedPost(postCID: postCID, envelopesCID: nil, audienceMode: .selfOnly, wasRecovered: true) : nil
    }

    /// The CID of the file part of a body the publisher built (`blob.bin`, then the fields).
    static func fileCID(of body: [UInt8]) -> String {
        let text = [UInt8]("filename=\"blob.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
        // The body starts with `--<boundary>\r\n`; the file's content ends before the next delimiter.
        guard let lineEnd = body.firstRange(of: [0x0D, 0x0A])?.lowerBound,
              let start = body.firstRange(of: text)?.upperBound,
              let end = body[start...].firstRange(of: [0x0D, 0x0A] + body[..<lineEnd])?.lowerBound else { return "" }
        return UnixFS.cid(of: body[start..<end]).description
    }
}

@Suite("Publisher: draft → sealed → prepared → submitted")
struct PublisherTests {
    let stationKey = MLKEM768.PrivateKey()

    func publisher(_ station: ScriptedStation = ScriptedStation([])) -> Publisher {
        Publisher(station: station, configuration: StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore()))
    }

    func draft(_ content: PostDraft.Content, audience: Audience? = .selfOnly) -> PostDraft {
        PostDraft(content: content, metadataJSON: Array(#"{"filename":"f"}"#.utf8), namespace: "drive", audience: audience)
    }

    @Test("A file is sealed with nothing written: its CID is the sealed bytes', every reading of the body gives the same bytes, and the body hash is theirs")
    func fileSealedAndPrepared() throws {
        try Fixture.withTemporaryDirectory { directory in
            // Three leaves, the last one short: the tag lands in the first.
            let plaintext = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let source = directory.appendingPathComponent("source")
            try plaintext.write(to: source)
            let sealed = try publisher().seal(draft(.file(source)), stationKey: stationKey.publicKey)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["source"])

            guard case .sealedFile(let sealer) = sealed.body else {
                Issue.record("a file is sealed as it is read")
                return
            }
            var sealedBytes = [UInt8]()
            try sealer.writeSealedBytes { sealedBytes += $0 }
            #expect(sealed.postCID == UnixFS.cid(of: sealedBytes).description)
            #expect(sealed.contentByteCount == Int64(plaintext.count))
            let key = try #require(sealed.postKey)
            #expect(try SecretBox.open(sealedBytes, using: key) == plaintext)
            #expect(sealed.fields.map(\.name) == ["metadata", "client", "audience_mode", "self_envelope"])
            let envelope = try #require(sealed.fields.last?.value)
            let sealedKey = try Envelope.open(envelope, with: stationKey)
            #expect(sealedKey.withUnsafeBytes { Array($0) } == key.withUnsafeBytes { Array($0) })

            let prepared = try publisher().prepare(sealed)
            let body = [UInt8](try prepared.form.encoded())
            #expect(prepared.bodySHA256 == SHA256.hash(data: body))
            #expect([UInt8](try prepared.form.encoded()) == body)
            #expect(prepared.requestByteCount == Int64(body.count))
            #expect(prepared.postCID == sealed.postCID)
            #expect(ScriptedStation.fileCID(of: body) == sealed.postCID)
        }
    }

    @Test("Bytes and a file of the same content give requests of the same length", arguments: [0, 1, 262_104, 262_105])
    func bytesAndFileAgree(size: Int) throws {
        try Fixture.withTemporaryDirectory { directory in
            let plaintext = Data(repeating: 0x5A, count: size)
            let source = directory.appendingPathComponent("source")
            try plaintext.write(to: source)
            let fromFile = try publisher().prepare(try publisher().seal(draft(.file(source)), stationKey: stationKey.publicKey))
            let fromBytes = try publisher().prepare(try publisher().seal(draft(.bytes(plaintext)), stationKey: stationKey.publicKey))
            #expect(fromFile.requestByteCount == fromBytes.requestByteCount)
            #expect(fromFile.postCID == ScriptedStation.fileCID(of: [UInt8](try fromFile.form.encoded())))
        }
    }

    @Test("The largest file size, from the framing, fills the request exactly; one byte more is refused before sealing",
          arguments: [Audience.selfOnly, .allFollowers, .specific(["uid-a", "uid-\"b\""])])
    func largestFillsTheRequest(audience: Audience) throws {
        for metadata in [nil, Array(#"{"filename":"née.txt"}"#.utf8)] {
            let largest = try Publisher.largestFileSize(metadataJSON: metadata, namespace: "drive", audience: audience)
            var draft = PostDraft(content: .bytes(Data(count: Int(largest))), metadataJSON: metadata, namespace: "drive", audience: audience)
            let prepared = try publisher().prepare(try publisher().seal(draft, stationKey: stationKey.publicKey))
            #expect(prepared.requestByteCount == StationClient.maximumRequestByteCount)
            draft.content = .bytes(Data(count: Int(largest) + 1))
            let error = #expect(throws: StationClientError.self) {
                try publisher().seal(draft, stationKey: stationKey.publicKey)
            }
            #expect(error?.kind == .tooLarge)
            #expect(error?.limit == largest)
        }
    }

    @Test("A file that cannot be read, or changes after it was sealed, is a local-file error")
    func unreadableFile() throws {
        try Fixture.withTemporaryDirectory { directory in
            let missing = #expect(throws: StationClientError.self) {
                try publisher().seal(draft(.file(directory.appendingPathComponent("missing"))), stationKey: stationKey.publicKey)
            }
            #expect(missing?.kind == .localFile)
            let source = directory.appendingPathComponent("source")
            try Data(repeating: 1, count: 10_000).write(to: source)
            let sealed = try publisher().seal(draft(.file(source)), stationKey: stationKey.publicKey)
            let writer = try FileHandle(forWritingTo: source)
            try writer.write(contentsOf: Data([2]))
            try writer.close()
            let changed = #expect(throws: StationClientError.self) { try publisher().prepare(sealed) }
            #expect(changed?.kind == .localFile)
            #expect(changed?.message.contains("changed") == true)
        }
    }

    @Test("A public post is sent in the clear, its metadata as JSON")
    func publicPost() throws {
        let sealed = try publisher().seal(draft(.bytes(Data("hello".utf8)), audience: nil), stationKey: stationKey.publicKey)
        #expect(sealed.postKey == nil)
        #expect(sealed.postCID == UnixFS.cid(of: Array("hello".utf8)).description)
        #expect(sealed.fields.map(\.name) == ["metadata", "client", "audience_mode"])
        #expect(sealed.fields.map(\.value) == [#"{"filename":"f"}"#, "drive", "public"])
        #expect(try publisher().prepare(sealed).isPublic)
    }

    func prepared() throws -> PreparedPost {
        try publisher().prepare(try publisher().seal(draft(.bytes(Data("post".utf8))), stationKey: stationKey.publicKey))
    }

    @Test("Submitted once when the station answers")
    func submittedOnce() async throws {
        let station = ScriptedStation([.stored(nil)])
        let prepared = try prepared()
        let published = try await publisher(station).submit(prepared, progress: nil)
        #expect(published.postCID == prepared.postCID && !published.wasRecovered)
        #expect(station.bodies.count == 1 && station.finds == 0)
    }

    @Test("A lost answer is looked for in the manifest before sending again; found, it is not sent twice")
    func lostAnswerFound() async throws {
        let station = ScriptedStation([.unreachable, .stored(nil)], inManifest: true)
        let published = try await publisher(station).submit(try prepared(), progress: nil)
        #expect(published.wasRecovered)
        #expect(station.bodies.count == 1 && station.finds == 1)
    }

    @Test("A station failure not followed by the post in the manifest is sent again, with the same bytes",
          arguments: [ScriptedStation.Answer.unreachable, .status(503, "busy"), .status(401, "replay")])
    func resentOnceWhenMissing(first: ScriptedStation.Answer) async throws {
        let station = ScriptedStation([first, .stored(nil)])
        let published = try await publisher(station).submit(try prepared(), progress: nil)
        #expect(!published.wasRecovered)
        #expect(station.bodies.count == 2 && station.finds == 1)
        #expect(station.bodies.first == station.bodies.last)
    }

    @Test("Two failures: the manifest is looked at once more, then the last failure is thrown")
    func twoFailures() async throws {
        let station = ScriptedStation([.unreachable, .status(502, "bad gateway")])
        let error = await #expect(throws: StationClientError.self) { try await publisher(station).submit(try prepared(), progress: nil) }
        #expect(error?.status == 502)
        #expect(station.bodies.count == 2 && station.finds == 2)
    }

    @Test("A refusal is thrown at once, and other bytes stored are an integrity failure")
    func refusalAndIntegrity() async throws {
        let refusing = ScriptedStation([.status(400, "Invalid audience_mode: x")])
        let refused = await #expect(throws: StationClientError.self) { try await publisher(refusing).submit(try prepared(), progress: nil) }
        #expect(refused?.status == 400)
        #expect(refusing.bodies.count == 1 && refusing.finds == 0)

        let other = ScriptedStation([.stored("QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4")])
        let mismatch = await #expect(throws: StationClientError.self) { try await publisher(other).submit(try prepared(), progress: nil) }
        #expect(mismatch?.kind == .integrity)
    }

    @Test("A cancelled submission sends nothing")
    func cancelledBeforeSending() async throws {
        let station = ScriptedStation([.stored(nil)])
        let prepared = try prepared()
        let publisher = publisher(station)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await publisher.submit(prepared, progress: nil)
        }
        let error = await #expect(throws: StationClientError.self) { try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(station.bodies.isEmpty)
    }
}
