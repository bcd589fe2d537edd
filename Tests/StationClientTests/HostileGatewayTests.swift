import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import ContentAddressing

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
            try await Fixture.withTemporaryDirectory { directory in
                let toFile = await #expect(throws: StationClientError.self) {
                    try await gateway.fetch(cid: cid, to: directory.appendingPathComponent("out"))
                }
                #expect(toFile?.kind == .refused)
                try Fixture.expectEmpty(directory)
            }
        }
        #expect(recorder.requests.withLock { $0.isEmpty })
    }

    @Test("Wrong bytes or an error answer leave an existing destination intact and no temporary file")
    func existingFilesSurviveAFailedFetch() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let post = try await client.publish(data: Data("the real content".utf8), metadata: Fixture.drive("real", size: 16))
        let gateway = try #require(client.configuration.gateway)
        try await Fixture.withTemporaryDirectory { directory in
            let destination = directory.appendingPathComponent("precious.txt")
            let precious = Data("written before the fetch".utf8)
            try precious.write(to: destination)

            rig.emulator.faults.replaceContent(of: post.postCID, with: Data("the gateway's forgery".utf8))
            let mismatch = await #expect(throws: StationClientError.self) { try await gateway.fetch(cid: post.postCID, to: destination) }
            #expect(mismatch?.kind == .integrity)
            #expect(try Data(contentsOf: destination) == precious)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["precious.txt"])

            let unknown = "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX"
            await #expect(throws: StationClientError.self) { try await gateway.fetch(cid: unknown, to: destination) }
            #expect(try Data(contentsOf: destination) == precious)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["precious.txt"])

            // Verified bytes replace the file.
            rig.emulator.faults.reset()
            try await gateway.fetch(cid: post.postCID, to: destination)
            #expect(try Data(contentsOf: destination) == rig.emulator.block(post.postCID))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["precious.txt"])
        }
    }

    @Test("Gateway failures are .gateway errors in the gateway's words, not station refusals")
    func gatewayFailuresHaveTheirOwnKind() async throws {
        let rig = try StationRig.inProcess()
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: rig.transport)
        let missing = await #expect(throws: StationClientError.self) {
            try await gateway.fetch(cid: "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX")
        }
        #expect(missing?.kind == .gateway)
        #expect(missing?.status == 404)
        #expect(missing?.transportError == nil)
        #expect(missing?.description.contains("the gateway refused the request") == true, "\(missing?.description ?? "")")
        #expect(missing?.description.contains("station") == false)

        // Nothing listens on port 1: a network failure, still of the gateway.
        let closed = try #require(URL(string: "http://127.0.0.1:1"))
        let unreachable = IPFSGateway(baseURL: closed, transport: StationRig.loopbackTransport())
        let down = await #expect(throws: StationClientError.self) {
            try await unreachable.resolve(ipnsName: "k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8")
        }
        #expect(down?.kind == .gateway)
        #expect(down?.transportError != nil)
        #expect(down?.description.contains("the gateway cannot be reached") == true, "\(down?.description ?? "")")
    }
}
