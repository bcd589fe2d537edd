import Foundation
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing

@Suite("The configuration's key policy decides where pairing's, following's and follower identities' keys come from")
struct KeyPolicyTests {
    /// Pairs with `rig` under `policy` (keys from the policy: `keys: nil`).
    static func pair(_ rig: StationRig, policy: KeyPolicy, keys: DeviceKeys? = nil) async throws -> StationClient {
        var configuration = rig.configuration()
        configuration.keyPolicy = policy
        let stationLog = rig.emulator.log
        return try await StationClient.pair(endpoint: rig.station, deviceName: "Test Phone", configuration: configuration,
                                            trust: .certificateAuthorityOnly, keys: keys) { _ in stationLog.latestPIN }
    }

    @Test("The default generates pure-Swift keys, and says they are not stored by reference")
    func defaultGenerates() async throws {
        #expect(StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore()).keyPolicy.description
                == "generatePureSwiftKeys")
        let (_, client) = try await StationRig.pairedInProcess()
        #expect(await !client.credentials.keysAreStoredByReference)
        #expect(try await !client.followerIdentity().keysAreStoredByReference)
    }

    @Test("refuseToGenerate: pairing without keys, a new follower identity and a follow throw .refused naming the call")
    func refuses() async throws {
        let rig = try StationRig.inProcess()
        let refused = await #expect(throws: StationClientError.self) { _ = try await Self.pair(rig, policy: .refuseToGenerate) }
        #expect(refused?.kind == .refused)
        #expect(refused?.operation == "pairing")
        #expect(rig.emulator.requests.entries.isEmpty)   // refused before anything was sent

        // With the app's keys, pairing goes ahead; they are stored by reference.
        let enclave = TestEnclave()
        let paired = try await Self.pair(rig, policy: .refuseToGenerate, keys: enclave.makeDeviceKeys())
        #expect(await paired.credentials.keysAreStoredByReference)

        let client = try await rig.client(for: paired) {
            $0.keyPolicy = .refuseToGenerate
            $0.keyReferenceResolver = enclave.resolver
        }
        let identity = await #expect(throws: StationClientError.self) { _ = try await client.followerIdentity() }
        #expect(identity?.kind == .refused)
        #expect(identity?.operation == "creating a follower identity")
        let follow = await #expect(throws: StationClientError.self) { _ = try await client.follow(stationAt: rig.station) }
        #expect(follow?.kind == .refused)
        #expect(follow?.operation == "following \(rig.station.absoluteString)")
        #expect(rig.count("POST", "/inbox") == 0)

        // An identity the app saved is used whatever the policy.
        try await FollowerIdentity(name: "mine", keys: enclave.makeDeviceKeys()).save(to: client.configuration.keyStore)
        #expect(try await client.followerIdentity().keysAreStoredByReference)
    }

    @Test("factory: pairing and a new follower identity use the app's keys; a factory that throws is .keyStore")
    func factory() async throws {
        let rig = try StationRig.inProcess()
        let enclave = TestEnclave()
        let paired = try await Self.pair(rig, policy: .factory { enclave.makeDeviceKeys() })
        #expect(await paired.credentials.keysAreStoredByReference)
        #expect(await paired.credentials.kemPrivateKey is NonExportableKEMKey)

        let client = try await rig.client(for: paired) {
            $0.keyPolicy = .factory { enclave.makeDeviceKeys() }
            $0.keyReferenceResolver = enclave.resolver
        }
        let identity = try await client.followerIdentity(name: "follower")
        #expect(identity.keysAreStoredByReference)
        #expect(identity.kemPrivateKey is NonExportableKEMKey)

        struct NoEnclave: Error {}
        let failing = try await rig.client(for: paired) { $0.keyPolicy = .factory { throw NoEnclave() } }
        let error = await #expect(throws: StationClientError.self) { _ = try await failing.followerIdentity() }
        #expect(error?.kind == .keyStore)
        #expect(error?.underlying is NoEnclave)
    }
}
