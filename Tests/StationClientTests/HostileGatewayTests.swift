import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

@Suite("A hostile IPFS gateway")
struct HostileGatewayTests {
    @Test("An identity-multihash CID is refused before anything is fetched")
    func identityCIDsAreNotFetched() async throws {
        let rig = try StationRig.inProcess()
        let recorder = RecordingTransport(base: rig.transport)
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: recorder)
        let inlined = CID(v1: Multicodec.raw, multihash: try Multihash(code: Multihash.identity, digest: Array("hello".utf8)))
        for cid in [inlined.description, "bafyaagqkdaeaeih77777777777776aja77777777777777yb"] {
            let inMemory = await #expect(throws: StationClientError.self) { try await gateway.fetch(cid: cid) }
            #expect(inMemory?.kind == .refused)
            let directory = try Fixture.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let toFile = await #expect(throws: StationClientError.self) {
                try await gateway.fetch(cid: cid, to: directory.appendingPathComponent("out"))
            }
            #expect(toFile?.kind == .refused)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
        #expect(recorder.requests.withLock { $0.isEmpty })
    }
}
