import Foundation
import Transport
import Manifest
import StationClient
import StationEmulator
import OrderedJSON
import ContentAddressing

/// `cipher demo`: the whole flow against an embedded emulator, step by step, with timings.
enum DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo",
        summary: "run the whole flow against an embedded station emulator, step by step, with timings")

    struct Step: Encodable {
        var number: Int
        var title: String
        var milliseconds: Double
        var result: String
    }

    struct Output: Encodable {
        var steps: [Step]
        var totalMilliseconds: Double
        enum CodingKeys: String, CodingKey { case steps, totalMilliseconds = "total_ms" }
    }

    /// The milliseconds from `start` to now.
    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds * 1000
    }

    /// Runs the steps in order, timing each and printing it as it finishes.
    final class Runner: Sendable {
        let console: Console
        let total: Int
        private let steps = Locked<[Step]>([])

        init(console: Console, total: Int) {
            self.console = console
            self.total = total
        }

        func step<T>(_ title: String, _ body: () async throws -> (T, String)) async throws -> T {
            let number = steps.withLock { $0.count } + 1
            let start = ContinuousClock.now
            let (value, result) = try await body()
            let ms = milliseconds(since: start)
            steps.withLock { $0.append(Step(number: number, title: title, milliseconds: ms, result: result)) }
            console.say("[\(trusted: String(format: "%2d/%d", number, total))] \(title) (\(trusted: String(format: "%.0f ms", ms)))\n        \(result)")
            return value
        }

        var recorded: [Step] { steps.withLock { $0 } }
    }

    static func run(_ context: CommandContext) async throws {
        let console = context.console
        let started = ContinuousClock.now
        console.say("cipher demo: pair, publish, read, share and follow against an embedded Cipher Station\n")
        let runner = Runner(console: console, total: 11)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("cipher-demo-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        let (emulator, endpoint, gatewayURL) = try await runner.step("start an embedded station (StationEmulator on loopback HTTP)") {
            let emulator = try StationEmulator()
            let url = try emulator.start()
            guard let gateway = emulator.gatewayURL else { throw CLIError.failure("the emulator's gateway did not start") }
            return ((emulator, url, gateway), "station \(url.absoluteString), gateway \(gateway.absoluteString), uid \(emulator.uid)")
        }
        defer { emulator.stop() }
        let transport = StationClientConfiguration.defaultTransport()
        let gateway = IPFSGateway(baseURL: gatewayURL, transport: transport)

        let client = try await runner.step("pair this device (new ML-KEM-768 + ML-DSA-65 keys, PIN from the station's log)") {
            // The same encrypted file key store the CLI uses, in a scratch directory.
            let store = try FileKeyStore(directory: scratch.appendingPathComponent("keys"), passphrase: UUID().uuidString)
            let configuration = StationClientConfiguration(
                namespace: DriveFiles.namespace, keyStore: store, transport: transport, gateway: gateway)
            let client = try await StationClient.pair(endpoint: endpoint, deviceName: "cipher demo", configuration: configuration) { _ in
                emulator.log.latestPIN
            }
            return (client, "device uid \(await client.credentials.deviceUID)")
        }

        try await runner.step("sign a request (GET /followers with six x-cipher-* headers)") {
            let followers = try await client.followers()
            return ((), "accepted: \(followers.count) followers")
        }

        let original = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let file = scratch.appendingPathComponent("report.bin")
        try original.write(to: file)
        let published = try await runner.step("publish report.bin (200 KB, audience self: encrypted on this device)") {
            let post = try await client.publish(fileAt: file, metadata: try DriveFiles.metadata(for: file))
            return (post, "post \(post.postCID)")
        }

        try await runner.step("list the drive namespace (manifest → /rewrap → open envelope → decrypt metadata)") {
            let listing = try await client.listPosts(as: DriveFileMetadata.self)
            guard listing.posts.map(\.postCID) == [published.postCID] else { throw CLIError.failure("the listing does not show the file") }
            return ((), listing.posts.map { "\($0.metadata?.filename ?? "?") (\($0.audienceMode))" }.joined(separator: ", "))
        }

        try await runner.step("download and decrypt it") {
            let copy = scratch.appendingPathComponent("copy.bin")
            try await client.download(postCID: published.postCID, envelopesCID: published.envelopesCID, to: copy)
            guard try Data(contentsOf: copy) == original else { throw CLIError.failure("the downloaded bytes differ") }
            return ((), "\(original.count) bytes, identical")
        }

        let follower = try await runner.step("a follower asks to follow (POST /inbox); the owner approves it") {
            let follower = FollowerIdentity.generate(name: "demo friend")
            _ = try await follower.sendFollowRequest(to: endpoint, transport: transport)
            _ = try await client.approveFollower(uid: follower.uid)
            return (follower, "approved \(follower.uid)")
        }

        let shared = try await runner.step("publish news.txt to all followers") {
            let post = try await client.publish(data: Data("hello, followers".utf8), metadata: DriveFileMetadata(filename: "news.txt"),
                                                audience: .allFollowers)
            return (post, "post \(post.postCID), audience \(post.audienceMode)")
        }

        try await runner.step("read as the follower (its own key, through the IPFS gateway, CID-checked)") {
            let reader = FollowedStationReader(identity: follower, gateway: gateway, transport: transport,
                                               configuration: client.configuration)
            let listing = try await reader.listPosts(of: .endpoint(endpoint), namespace: DriveFiles.namespace, as: DriveFileMetadata.self)
            let names = listing.posts.compactMap { $0.metadata?.filename }
            guard names == ["news.txt"] else { throw CLIError.failure("the follower should read news.txt only, read \(names)") }
            return ((), "reads \(names.joined(separator: ", ")) and not report.bin")
        }

        try await runner.step("a second app in the notes namespace, side by side in one manifest") {
            let notes = try await StationClient.pair(
                endpoint: endpoint, deviceName: "notes app",
                configuration: StationClientConfiguration(namespace: "notes", keyStore: InMemoryKeyStore(), transport: transport,
                                                          gateway: gateway)) { _ in emulator.log.latestPIN }
            _ = try await notes.publish(data: Data("milk, eggs".utf8), metadata: ["title": "Shopping"] as [String: String])
            let theirs = try await notes.listPosts(as: JSONValue.self).posts.count
            let ours = try await client.listPosts(as: DriveFileMetadata.self).posts.count
            return ((), "notes sees \(theirs) post, drive sees \(ours) posts")
        }

        try await runner.step("remove news.txt from the manifest") {
            _ = try await client.delete(postCID: shared.postCID)
            let left = try await client.listPosts(as: DriveFileMetadata.self).posts.compactMap { $0.metadata?.filename }
            return ((), "drive now holds \(left.joined(separator: ", "))")
        }

        let totalMs = milliseconds(since: started)
        console.say("\ndemo complete: \(runner.recorded.count) steps in \(trusted: String(format: "%.0f ms", totalMs))")
        console.emit(Output(steps: runner.recorded, totalMilliseconds: totalMs))
    }
}
