import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import OrderedJSON

@Suite("Listing as an asynchronous sequence; progress as one")
struct PostSequenceTests {
    @Test("The sequence gives the listing's posts in manifest order, and keeps the keys at the end")
    func sameAsListing() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        for name in ["a", "b", "c", "d", "e"] {
            _ = try await client.publish(data: Data(name.utf8), metadata: Fixture.drive(name, size: 1))
        }
        var names: [String] = []
        for try await item in client.posts(as: DriveFileMetadata.self) {
            names.append(try item.get().metadata?.filename ?? "?")
        }
        #expect(names == ["a", "b", "c", "d", "e"])
        #expect(await client.cachedPostKeyCount == 5)
        // The keys were kept: a listing afterwards asks for none.
        let rewraps = rig.count("POST", "/rewrap")
        #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.count == 5)
        #expect(rig.count("POST", "/rewrap") == rewraps)
    }

    @Test("Keys are fetched as items are consumed, at most rewrapConcurrency ahead")
    func readsAheadOnlyTheWindow() async throws {
        let (rig, paired) = try await StationRig.pairedInProcess()
        for index in 0..<8 {
            _ = try await paired.publish(data: Data("\(index)".utf8), metadata: Fixture.drive("\(index)", size: 1))
        }
        let client = try await rig.client(for: paired) { $0.rewrapConcurrency = 2 }
        let before = rig.count("POST", "/rewrap")
        var iterator = client.posts(as: DriveFileMetadata.self).makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(try first.get().metadata?.filename == "0")
        // One post consumed: its read and at most one more were started, never all eight.
        #expect(rig.count("POST", "/rewrap") - before <= 2)
    }

    @Test("A post that cannot be read is one failure element; the rest follow")
    func badPostIsSkipped() async throws {
        let (rig, paired) = try await StationRig.pairedInProcess()
        let first = try await paired.publish(data: Data("1".utf8), metadata: Fixture.drive("one", size: 1))
        _ = try await paired.publish(data: Data("2".utf8), metadata: Fixture.drive("two", size: 1))
        let client = try await rig.client(for: paired) { $0.rewrapConcurrency = 1 }
        // The first /rewrap answer is a refusal: that post is skipped, the second still read.
        rig.emulator.faults.failNextRequests(1, status: 500, route: RequestRoute("POST", path: "/rewrap"))
        var outcomes: [String] = []
        for try await item in client.posts(as: DriveFileMetadata.self) {
            switch item {
            case .success(let post): outcomes.append(post.metadata?.filename ?? "?")
            case .failure(let skipped): outcomes.append("skipped \(skipped.postCID)")
            }
        }
        #expect(outcomes == ["skipped \(first.postCID)", "two"])
    }

    @Test("An empty station gives an empty sequence; an unreachable one throws at the first step")
    func emptyAndUnreachable() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        var count = 0
        for try await _ in client.posts(as: JSONValue.self) { count += 1 }
        #expect(count == 0)
        rig.emulator.faults.failNextRequests(100, status: 502, body: "Bad Gateway", route: RequestRoute("GET", path: "/profile"))
        var iterator = client.posts(as: JSONValue.self).makeAsyncIterator()
        await #expect(throws: StationClientError.self) { _ = try await iterator.next() }
    }

    @Test("ProgressTask streams a publish's progress to its end and gives its result")
    func progressTask() async throws {
        let client = try await StationRig.pairedInProcess().client
        let content = Data(repeating: 7, count: 3 << 20)
        let upload = ProgressTask { progress in
            try await client.publish(data: content, metadata: Fixture.drive("big", size: content.count), progress: progress)
        }
        var last: ByteProgress?
        for await step in upload.updates { last = step }
        let post = try await upload.value
        #expect(try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID) == content)
        let final = try #require(last)
        #expect(final == ByteProgress(completed: Int64(content.count), total: Int64(content.count)), "the file's bytes")
    }

    @Test("A cancelled ProgressTask ends its updates and throws")
    func cancelledProgressTask() async throws {
        let task = ProgressTask<Int> { progress in
            progress(ByteProgress(completed: 1, total: 2))
            try await Task.sleep(for: .seconds(60))
            return 1
        }
        task.cancel()
        for await _ in task.updates {}
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }
}
