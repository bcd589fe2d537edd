import ClassicalCrypto
import Foundation
import Manifest
import OrderedJSON
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
import Transport

@Suite("Device keys an app keeps where they cannot be copied: pairing, signing, opening, following, storing")
struct DeviceKeyTests {
    static let cheap = Argon2.Limits(operations: 1, memoryBytes: 1 << 20)

    /// Expects `body` to throw a ``StationClientError`` for which `matches` holds.
    static func keyStoreError(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void, matching matches: (StationClientError?) -> Bool
    ) {
        let error = #expect(throws: StationClientError.self, sourceLocation: sourceLocation) { try body() }
        #expect(matches(error), "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    /// ``keyStoreError(sourceLocation:_:matching:)`` for an async `body`.
    static func keyStoreErrorAsync(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void,
        matching matches: (StationClientError?) -> Bool
    ) async {
        let error = await #expect(throws: StationClientError.self, sourceLocation: sourceLocation) { try await body() }
        #expect(matches(error), "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    @Test("With keys whose secrets no API reaches, a device pairs, publishes, lists, downloads, reloads and follows")
    func endToEndWithNonExportableKeys() async throws {
        let enclave = TestEnclave()
        let deviceKeys = enclave.makeDeviceKeys()
        let stations = try await FollowingTests.TwoStations(bobKeys: deviceKeys, bobResolver: enclave.resolver)
        let (atBob, atAlice) = (stations.atBob, stations.atAlice)
        let bobConfiguration = FollowingTests.TwoStations.configuration(
            host: "bob.test", network: stations.network, keyStore: stations.bobStore, resolver: enclave.resolver)
        // The station stores the enclave keys' public halves; the client holds the enclave keys themselves.
        let credentials = await atBob.credentials
        #expect(credentials.kemPublicKey.rawRepresentation == deviceKeys.kemKey.publicKey.rawRepresentation)
        #expect(credentials.signingPublicKey.rawRepresentation == deviceKeys.signingKey.publicKey.rawRepresentation)
        #expect(credentials.kemPrivateKey is NonExportableKEMKey && credentials.signingPrivateKey is NonExportableSigningKey)
        // Stored by reference (version 2), with no private key member.
        let stored = try #require(try await stations.bobStore.loadSecret(KeyStoreItem.credentials))
        let object = try #require(try stored.withUnsafeBytes { try WireJSON.parse(Array($0)) }.objectValue)
        #expect(object["version"] == 2)
        #expect(object["kem_private_key"] == nil && object["signing_private_key"] == nil)
        #expect(object["kem_public_key"]?.stringValue == Hex.encode(deviceKeys.kemKey.publicKey.rawRepresentation))

        // Publish, list (each post key comes through /rewrap and the enclave's ML-KEM key), download.
        let content = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let metadata = DriveFileMetadata(filename: "enclave.bin", mimeType: "application/octet-stream", sizeBytes: content.count)
        let post = try await atBob.publish(data: content, metadata: metadata)
        let signaturesBefore = enclave.signatures.value
        #expect(signaturesBefore > 0)
        await atBob.clearPostKeyCache()   // publishing kept the key: make the listing rewrap it
        let listing = try await atBob.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [post.postCID])
        #expect(listing.posts.map(\.metadata) == [metadata])
        #expect(enclave.decapsulations.value > 0)
        #expect(try await atBob.download(postCID: post.postCID, envelopesCID: post.envelopesCID) == content)
        #expect(enclave.signatures.value > signaturesBefore)

        // A new process: the credentials come back from the key store through the app's resolver.
        let reloaded = try await StationClient.load(configuration: bobConfiguration)
        let reloadedKeys = await reloaded.credentials
        #expect(reloadedKeys.kemPrivateKey as? NonExportableKEMKey === deviceKeys.kemKey as? NonExportableKEMKey)
        #expect(reloadedKeys.signingPrivateKey as? NonExportableSigningKey === deviceKeys.signingKey as? NonExportableSigningKey)
        let decapsulationsBefore = enclave.decapsulations.value
        let fresh = try await StationClient.load(configuration: bobConfiguration)  // no cached post keys
        #expect(try await fresh.download(postCID: post.postCID, envelopesCID: post.envelopesCID) == content)
        #expect(enclave.decapsulations.value > decapsulationsBefore)

        // Following with a follower identity whose keys are also the enclave's.
        let followerKeys = enclave.makeDeviceKeys()
        try await FollowerIdentity(name: "Bob's Enclave", keys: followerKeys).save(to: stations.bobStore)
        let handle = try await reloaded.follow(stationAt: stations.aliceURL)
        let identity = try #require(try await FollowerIdentity.load(from: stations.bobStore, keyResolver: enclave.resolver))
        #expect(identity.uid == handle.followerUID)
        #expect(identity.kemPrivateKey as? NonExportableKEMKey === followerKeys.kemKey as? NonExportableKEMKey)
        // Alice's station got the identity's public keys.
        let pending = try await atAlice.pendingFollowers()
        #expect(pending.map(\.uid) == [identity.uid])
        _ = try await atAlice.approveFollower(uid: identity.uid)
        let shared = Data("for followers".utf8)
        let sharedMetadata = DriveFileMetadata(filename: "shared.txt", mimeType: "text/plain", sizeBytes: shared.count)
        let sharedPost = try await atAlice.publish(data: shared, metadata: sharedMetadata, audience: .allFollowers)
        let opened = enclave.decapsulations.value
        let feed = try await reloaded.reader(for: handle, gateway: stations.aliceGateway)
        let followed = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        #expect(followed.posts.map(\.postCID) == [sharedPost.postCID])
        let item = try #require(followed.posts.first)
        #expect(try await feed.download(item) == shared)
        #expect(enclave.decapsulations.value > opened)
    }

    /// Credentials for `keys` as pairing makes them.
    static func credentials(_ keys: DeviceKeys) throws -> DeviceCredentials {
        DeviceCredentials(
            kemPrivateKey: keys.kemKey, signingPrivateKey: keys.signingKey, deviceUID: "Phone-ABC", stationUID: "station",
            stationKEMPublicKeyHex: "00", endpoint: try #require(URL(string: "https://station.test:8443")), ipfsPeerID: "12D3Koo",
            ipnsName: "k51", stationPublicKeyPin: try PublicKeyFingerprint(sha256: Array(repeating: 9, count: 32)), ipnsSequence: 7)
    }

    /// The key stores credentials go through: in memory and a passphrase-encrypted directory.
    static func stores() throws -> [(store: any KeyStore, directory: URL?)] {
        let directory = try Fixture.temporaryDirectory()
        return [(InMemoryKeyStore(), nil), (try FileKeyStore(directory: directory, passphrase: "keys", limits: cheap), directory)]
    }

    @Test("DeviceCredentials round-trip through InMemoryKeyStore and FileKeyStore with byte keys, reference keys and both")
    func credentialsRoundTrip() async throws {
        let enclave = TestEnclave()
        let kinds: [DeviceKeys] = [
            .generate(), enclave.makeDeviceKeys(),
            DeviceKeys(kemKey: MLKEM768.PrivateKey(), signingKey: enclave.makeSigningKey()),
            DeviceKeys(kemKey: enclave.makeKEMKey(), signingKey: MLDSA65.PrivateKey()),
        ]
        for (store, directory) in try Self.stores() {
            defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
            for keys in kinds {
                let original = try Self.credentials(keys)
                try await store.saveSecret(try original.encoded(), as: KeyStoreItem.credentials)
                let stored = try #require(try await store.loadSecret(KeyStoreItem.credentials))
                let loaded = try DeviceCredentials(encoded: stored, keyResolver: enclave.resolver)
                #expect(loaded.kemPublicKey.rawRepresentation == original.kemPublicKey.rawRepresentation)
                #expect(loaded.signingPublicKey.rawRepresentation == original.signingPublicKey.rawRepresentation)
                #expect(loaded.deviceUID == "Phone-ABC" && loaded.stationPublicKeyPin == original.stationPublicKeyPin)
                #expect(loaded.ipnsSequence == 7 && loaded.endpoint == original.endpoint)
                // Byte keys come back as the same bytes, reference keys as the app's own key objects.
                if let pure = keys.kemKey as? MLKEM768.PrivateKey {
                    #expect(try loaded.pureKEMKey.expandedSecret == pure.expandedSecret)
                } else {
                    #expect(loaded.kemPrivateKey as? NonExportableKEMKey === keys.kemKey as? NonExportableKEMKey)
                }
                if let pure = keys.signingKey as? MLDSA65.PrivateKey {
                    #expect(try loaded.pureSigningKey.expandedSecret == pure.expandedSecret)
                } else {
                    #expect(loaded.signingPrivateKey as? NonExportableSigningKey === keys.signingKey as? NonExportableSigningKey)
                }
                // Only credentials with a reference are version 2; byte-only ones stay what earlier versions read.
                let object = try #require(try stored.withUnsafeBytes { try WireJSON.parse(Array($0)) }.objectValue)
                let byBytes = keys.kemKey is MLKEM768.PrivateKey && keys.signingKey is MLDSA65.PrivateKey
                #expect(object["version"] == (byBytes ? 1 : 2))
            }
        }
    }

    @Test("A FollowerIdentity round-trips through both key stores with byte keys and with reference keys")
    func followerIdentityRoundTrip() async throws {
        let enclave = TestEnclave()
        for (store, directory) in try Self.stores() {
            defer { if let directory { try? FileManager.default.removeItem(at: directory) } }
            let generated = FollowerIdentity.generate(name: "reader")
            try await generated.save(to: store)
            let loadedGenerated = try #require(try await FollowerIdentity.load(from: store))
            #expect(try loadedGenerated.uid == generated.uid && loadedGenerated.pureKEMKey.expandedSecret == generated.pureKEMKey.expandedSecret)

            let keys = enclave.makeDeviceKeys()
            let kept = FollowerIdentity(name: "Enclave Reader", keys: keys)
            #expect(kept.uid.hasPrefix("enclavereader-"))
            try await kept.save(to: store)
            let loaded = try #require(try await FollowerIdentity.load(from: store, keyResolver: enclave.resolver))
            #expect(loaded.uid == kept.uid)
            #expect(loaded.kemPrivateKey as? NonExportableKEMKey === keys.kemKey as? NonExportableKEMKey)
            #expect(loaded.signingPublicKey.rawRepresentation == kept.signingPublicKey.rawRepresentation)
            // Without the resolver: a typed key-store error, not a crash or a silent nil.
            await Self.keyStoreErrorAsync { _ = try await FollowerIdentity.load(from: store) } matching: { error in error?.kind == .keyStore && String(describing: error).contains("KeyReferenceResolver") }
        }
    }

    @Test("Credentials written by the previous version's encoded() still load, and pure keys are still written so")
    func migration() throws {
        let kem = try MLKEM768.PrivateKey(seedRepresentation: [UInt8](repeating: 1, count: 64))
        let signing = try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 2, count: 32))
        // Byte for byte what `encoded()` wrote at 8d9b3a9 (version 1): the key hex first, then the
        // other members in the order it set them.
        let written = #"{"kem_private_key":"\#(Hex.encode(kem.expandedRepresentation))","signing_private_key":"\#(Hex.encode(signing.expandedRepresentation))","version":1,"device_uid":"Phone-ABC","station_uid":"station","station_kem_public_key":"00","endpoint":"https://station.test:8443","ipfs_peer_id":"12D3Koo","ipns_name":"k51","station_mldsa_public_key":"ab","tls_public_key_pin":"sha256//CQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQk=","endpoint_trust":"pinned_key","ipns_sequence":"7"}"#
        let loaded = try DeviceCredentials(encoded: SecretBytes(copying: Array(written.utf8)))
        #expect(try loaded.pureKEMKey.expandedSecret == kem.expandedSecret)
        #expect(try loaded.pureSigningKey.expandedSecret == signing.expandedSecret)
        #expect(loaded.deviceUID == "Phone-ABC" && loaded.stationUID == "station" && loaded.ipnsSequence == 7)
        #expect(loaded.stationPublicKeyPin == (try PublicKeyFingerprint(sha256: Array(repeating: 9, count: 32))))
        #expect(loaded.endpointTrust == .pinnedKey && loaded.stationMLDSAPublicKeyHex == "ab")
        // The pin's endpoint, not kept then, is the (pinned) endpoint.
        #expect(loaded.pinnedEndpoint == URL(string: "https://station.test:8443"))
        // Written again, they are the same bytes plus that one member (after the pin): an earlier
        // SDK still reads them (it ignores members it does not know).
        let rewritten = written.replacingOccurrences(
            of: #""endpoint_trust""#, with: #""tls_public_key_pin_endpoint":"https://station.test:8443","endpoint_trust""#)
        #expect(try loaded.encoded() == SecretBytes(copying: Array(rewritten.utf8)))
        // A version this SDK does not know is refused by name.
        let newer = written.replacingOccurrences(of: #""version":1"#, with: #""version":3"#)
        Self.keyStoreError { _ = try DeviceCredentials(encoded: SecretBytes(copying: Array(newer.utf8))) } matching: { error in error?.kind == .keyStore && String(describing: error).contains("newer version") }
    }

    @Test("A resolver that returns a key with another public key, or fails, is refused with a typed error")
    func wrongResolvedKey() throws {
        let enclave = TestEnclave()
        let stored = try Self.credentials(enclave.makeDeviceKeys()).encoded()
        let other = enclave.makeDeviceKeys()
        let wrongKEM = KeyReferenceResolver(signingKey: enclave.resolver.signingKey, kemKey: { _, _ in other.kemKey })
        Self.keyStoreError { _ = try DeviceCredentials(encoded: stored, keyResolver: wrongKEM) } matching: { error in error?.kind == .keyStore && String(describing: error).contains("another public key") }
        let wrongSigning = KeyReferenceResolver(signingKey: { _, _ in other.signingKey }, kemKey: enclave.resolver.kemKey)
        Self.keyStoreError { _ = try DeviceCredentials(encoded: stored, keyResolver: wrongSigning) } matching: { error in error?.kind == .keyStore && String(describing: error).contains("ML-DSA-65") }
        // The lookup is given the stored public key, and its failure is carried.
        let failing = KeyReferenceResolver(signingKey: enclave.resolver.signingKey, kemKey: { _, publicKey in
            #expect(publicKey.rawRepresentation.count == MLKEM768.publicKeyByteCount)
            throw TestEnclave.UnknownReference()
        })
        Self.keyStoreError { _ = try DeviceCredentials(encoded: stored, keyResolver: failing) } matching: { error in error?.kind == .keyStore && error?.underlying is TestEnclave.UnknownReference }
    }

    @Test("Reference credentials loaded without a resolver give a typed key-store error, in DeviceCredentials and StationClient.load")
    func referenceWithoutResolver() async throws {
        let enclave = TestEnclave()
        let stored = try Self.credentials(enclave.makeDeviceKeys()).encoded()
        Self.keyStoreError { _ = try DeviceCredentials(encoded: stored) } matching: { error in error?.kind == .keyStore && String(describing: error).contains("KeyReferenceResolver") }
        let store = InMemoryKeyStore()
        try await store.saveSecret(stored, as: KeyStoreItem.credentials)
        await Self.keyStoreErrorAsync { _ = try await StationClient.load(configuration: StationClientConfiguration(namespace: "drive", keyStore: store)) } matching: { error in error?.kind == .keyStore }
    }

    /// A key that only signs: neither exportable nor able to give a reference.
    struct SignOnlyKey: MLDSA65SigningKey {
        let key = MLDSA65.PrivateKey()
        var publicKey: MLDSA65.PublicKey { key.publicKey }
        func signature(for message: some DataProtocol) throws -> Data { try key.signature(for: message) }
    }

    /// A key whose reference cannot be produced (its enclave is gone).
    struct LostKey: MLKEM768DecapsulationKey, ReferenceStorableKey {
        let key = MLKEM768.PrivateKey()
        var publicKey: MLKEM768.PublicKey { key.publicKey }
        func decapsulate(_ ciphertext: some DataProtocol) throws -> SymmetricKey { try key.decapsulate(ciphertext) }
        var keyReference: Data { get throws { throw TestEnclave.UnknownReference() } }
    }

    @Test("Keys that can be neither exported nor referenced cannot be saved: a typed error, before pairing registers them")
    func unsavableKeys() async throws {
        let unsavable = DeviceKeys(kemKey: MLKEM768.PrivateKey(), signingKey: SignOnlyKey())
        Self.keyStoreError { _ = try Self.credentials(unsavable).encoded() } matching: { error in error?.kind == .keyStore && String(describing: error).contains("cannot be saved") }
        await Self.keyStoreErrorAsync { _ = try await FollowerIdentity(name: "x", keys: unsavable).save(to: InMemoryKeyStore()) } matching: { error in error?.kind == .keyStore }
        Self.keyStoreError { _ = try Self.credentials(DeviceKeys(kemKey: LostKey(), signingKey: MLDSA65.PrivateKey())).encoded() } matching: { error in error?.underlying is TestEnclave.UnknownReference }
        let rig = try StationRig.inProcess()
        let log = rig.emulator.log
        await Self.keyStoreErrorAsync {
            _ = try await StationClient.pair(endpoint: rig.station, deviceName: "Phone", configuration: rig.configuration(),
                                             trust: .certificateAuthorityOnly, keys: unsavable) { _ in log.latestPIN }
        } matching: { error in error?.kind == .keyStore }
        // Refused before the station was asked to register the device.
        #expect(rig.emulator.requests.count(RequestRoute("POST", path: "/delegate/start")) == 0)
    }
}
