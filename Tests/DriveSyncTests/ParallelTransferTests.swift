import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
import Transport
@testable import DriveSync

/// Several files at a time (``SyncOptions/transfers``): the station calls overlap, the journal
/// stays exact (a kill at any state write resumes with each file published once), progress
/// adds up, and a station gone mid-run stops it.
@Suite("Parallel transfers")
struct ParallelTransferTests {
    static func options(_ name: String, transfers: Int) -> SyncOptions {
        var options = SyncOptions(maximumDeletions: 100, deviceName: name)
        options.transfers = transfers
        return options
    }

    @Test func theSettingIsClampedAndDefaultsToFour() {
        var options = SyncOptions()
        #expect(options.transfers == 4 && SyncOptions.defaultTransfers == 4)
        options.transfers = 0
        #expect(options.transfers == 1)
        options.transfers = 99
        #expect(options.transfers == 16)
    }

    @Test func twelveFilesAtFourTransfersConvergeWithProgressThatAddsUp() async throws {
        try await SyncRig.with { rig in
            for index in 0..<12 {
                try rig.laptop.write("dir\(index % 3)/f\(index).txt", String(repeating: "\(index)", count: 1000 + index * 500))
            }
            let reports = Locked<[SyncProgress]>([])
            let laptop = try await rig.laptop.sync(Self.options("laptop", transfers: 4)).sync { progress in
                reports.withLock { $0.append(progress) }
            }
            #expect(laptop.failures.isEmpty && laptop.completed.count == 12)
            let seen = reports.value
            let total = laptop.completed.reduce(Int64(0)) { $0 + $1.byteCount }
            #expect(seen.allSatisfy { $0.totalBytes == total && $0.totalActions == 12 })
            // Finished and in-flight bytes together: never back, never past the total, all at the end.
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes && $0.completedActions <= $1.completedActions })
            #expect(seen.allSatisfy { $0.completedBytes <= total })
            #expect(seen.last?.completedBytes == total && seen.last?.completedActions == 12 && seen.last?.currentAction == nil)
            // Every report of a file's bytes names that file.
            #expect(seen.filter { $0.currentFileBytes > 0 }.allSatisfy { $0.currentAction != nil })

            let phone = try await rig.phone.sync(Self.options("phone", transfers: 4)).sync()
            #expect(phone.failures.isEmpty && phone.completed.count == 12 && phone.completed.allSatisfy { $0.kind == .download })
            let tree = try await rig.expectSameTree()
            #expect(tree.count == 12)
            // Edits and deletions both ways, four at a time.
            for index in 0..<4 { try rig.phone.write("dir\(index % 3)/f\(index).txt", "phone edit \(index)") }
            for index in 4..<8 { try rig.laptop.remove("dir\(index % 3)/f\(index).txt") }
            try await rig.phone.syncExpectingSuccess(Self.options("phone", transfers: 4))
            try await rig.laptop.syncExpectingSuccess(Self.options("laptop", transfers: 4))
            try await rig.phone.syncExpectingSuccess(Self.options("phone", transfers: 4))
            let after = try await rig.expectSameTree()
            #expect(after.count == 8 && after["dir0/f0.txt"] == SyncRig.sha256("phone edit 0"))
        }
    }

    /// Counted by a transport that holds each `POST /post` until another one is in flight (at
    /// most a few seconds, then lets it go): no timing decides the figure.
    @Test(arguments: [1, 4])
    func publishesOverlapUpToTheSetting(transfers: Int) async throws {
        try await SyncRig.with { rig in
            let counter = InFlightCounter(holdingUntil: transfers > 1 ? 2 : nil)
            let device = try await rig.device("tablet", wrapping: { CountingTransport(base: $0, counter: counter) })
            for index in 0..<12 { try device.write("f\(index).txt", "file \(index)") }
            let report = try await device.syncExpectingSuccess(Self.options("tablet", transfers: transfers))
            #expect(report.completed.count == 12)
            if transfers == 1 {
                #expect(counter.maximum == 1)
            } else {
                #expect(counter.maximum > 1 && counter.maximum <= transfers)
            }
            #expect(try await rig.remotePaths().count == 12)
        }
    }

    @Test func aStationGoneMidRunStopsFourTransfersAsOffline() async throws {
        try await SyncRig.with { rig in
            for index in 0..<12 { try rig.laptop.write("f\(index).txt", "file \(index)") }
            let emulator = rig.emulator
            let sync = rig.laptop.sync(Self.options("laptop", transfers: 4))
            do throws(DriveSyncError) {
                _ = try await sync.sync { progress in
                    if progress.completedActions == 1 { emulator.faults.failNextRequests(Int.max, status: 502) }
                }
                Issue.record("the run went on without the station")
            } catch {
                #expect(error.kind == .offline, "\(error)")
                #expect((error.underlying as? StationClientError)?.kind == .unreachable, "\(error)")
            }
            // No new action after the stop: at most the first and those in flight with it got a post.
            let posted = emulator.manifest.allPosts.count
            #expect(posted >= 1 && posted <= 4, "\(posted)")
            emulator.faults.reset()
            let report = try await rig.laptop.syncExpectingSuccess(Self.options("laptop", transfers: 4))
            #expect(report.completed.count + posted >= 12)
            #expect(try await rig.converge().count == 12)
        }
    }

    @Test func actionsOnOverlappingPathsNeverRunTogether() throws {
        func keys(_ step: SyncStep) -> [[String]] { Runner.pathKeys(of: step) }
        let stamp = FileStamp(size: 1, modified: 0, fileNumber: 1, device: 1, changed: 0)
        let a = try SyncPath(relative: "docs/a.txt"), upperA = try SyncPath(relative: "Docs/A.txt")
        let folder = try SyncPath(relative: "docs"), other = try SyncPath(relative: "docs/b.txt")
        let upload = keys(.upload(a, stamp, replacing: nil, ancestor: nil, audience: .selfOnly))
        #expect(Runner.overlap(upload, keys(.trash(upperA, stamp))))
        #expect(Runner.overlap(upload, keys(.trash(folder, stamp))))
        #expect(Runner.overlap(upload, keys(.renameLocal(other, from: a, stamp, postCID: "x"))))
        #expect(Runner.overlap(upload, keys(.conflict(other, stamp, copy: a, postCID: "x", supersedes: []))))
        #expect(!Runner.overlap(upload, keys(.download(other, postCID: "x", replacing: nil, supersedes: []))))
    }
}

/// Counts the `POST /post` requests in flight at once, and holds each until `holdingUntil` are
/// (or a few seconds passed).
final class InFlightCounter: Sendable {
    private let counts = Locked((current: 0, maximum: 0))
    let holdingUntil: Int?

    init(holdingUntil: Int?) { self.holdingUntil = holdingUntil }

    var maximum: Int { counts.value.maximum }

    func enter() async {
        counts.withLock { counts in
            counts.current += 1
            counts.maximum = max(counts.maximum, counts.current)
        }
        guard let holdingUntil else { return }
        let deadline = ContinuousClock.now + .seconds(10)
        while counts.value.maximum < holdingUntil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    func leave() { counts.withLock { $0.current -= 1 } }
}

/// A transport that counts the publishes in flight through `counter`.
struct CountingTransport: HTTPTransport {
    let base: any HTTPTransport
    let counter: InFlightCounter

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        guard request.method == .post, request.url.path == "/post" else { return try await base.send(request, body: body, options: options) }
        await counter.enter()
        defer { counter.leave() }
        return try await base.send(request, body: body, options: options)
    }

    func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        try await base.presentedPublicKey(at: url)
    }
}

extension SyncRig {
    /// A third device paired with the rig's station (a folder of its own beside the others),
    /// whose requests go through `wrapping` the emulator's transport.
    func device(_ name: String, wrapping: (any HTTPTransport) -> any HTTPTransport) async throws -> Device {
        let root = laptop.folder.deletingLastPathComponent()
        let folder = root.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cacheStore = InMemoryCacheStore()
        var configuration = StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore(), transport: wrapping(emulator.transport),
                                                       persistsPostKeys: true, cacheStore: cacheStore)
        configuration.temporaryDirectory = root.appendingPathComponent("tmp-\(name)", isDirectory: true)
        try FileManager.default.createDirectory(at: configuration.temporaryDirectory, withIntermediateDirectories: true)
        let log = emulator.log
        let client = try await StationClient.pair(endpoint: station, deviceName: name, configuration: configuration) { _ in log.latestPIN }
        return Device(client: client, folder: folder, cacheStore: cacheStore, name: name)
    }
}
