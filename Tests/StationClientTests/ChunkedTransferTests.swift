import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

@Suite("In process, bodies move in steps as over a socket, and a throttled route makes cancelling halfway a short test")
struct ChunkedTransferTests {
    @Test("A 2 MiB download through the in-process transport reports progress in steps, not once at the end")
    func progressInSteps() async throws {
        let (_, client) = try await StationRig.pairedInProcess()
        let content = Data((0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0) })
        let post = try await client.publish(data: content, metadata: Fixture.drive("big.bin", size: content.count))
        let reports = Locked<[ByteProgress]>([])
        try await Fixture.withTemporaryDirectory { directory in
            try await client.download(postCID: post.postCID, to: directory.appendingPathComponent("big.bin"),
                                      plaintextSize: Int64(content.count)) { progress in reports.withLock { $0.append(progress) } }
            let between = Set(reports.value.map(\.completed).filter { $0 > 0 && $0 < Int64(content.count) })
            #expect(between.count >= 8, "\(reports.value)")
            #expect(reports.value.last == ByteProgress(completed: Int64(content.count), total: Int64(content.count)))
        }
    }

    @Test("A throttled download cancelled once half has arrived ends .cancelled and leaves no file")
    func cancelHalfway() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let content = Data(count: 512 * 1024)
        let post = try await client.publish(data: content, metadata: Fixture.drive("memo.m4a", size: content.count))
        try await Fixture.withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("memo.m4a")

            rig.emulator.faults.throttle(RequestRoute("GET", pathPrefix: "/content/"), toBytesPerSecond: 1 << 20)
            let download = ProgressTask(cancellingWhen: { $0.completed * 2 >= $0.total ?? .max }) {
                try await client.download(postCID: post.postCID, to: file, progress: $0)
            }
            let error = await #expect(throws: StationClientError.self) { try await download.value }
            #expect(error?.kind == .cancelled)
            try Fixture.expectEmpty(directory)
        }
    }
}
