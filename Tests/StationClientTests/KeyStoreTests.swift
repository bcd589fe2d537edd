import Foundation
import Transport
import Manifest
import PQCrypto
@testable import StationClient
import ClassicalCrypto
import Testing
import OrderedJSON
import ContentAddressing

@Suite("Key stores and credentials")
struct KeyStoreTests {
    static let cheap = Argon2.Limits(operations: 1, memoryBytes: 1 << 20)

    @Test("FileKeyStore round-trips, writes mode 0600, and encrypts at rest")
    func fileRoundTrip() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let store = try FileKeyStore(directory: directory, passphrase: "correct horse", limits: Self.cheap)
            let secret = Array("the device's secret keys".utf8)
            try await store.save(secret, as: "item")
            #expect(try await store.load("item") == secret)
            let url = try store.fileURL(for: "item")
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let onDisk = try Data(contentsOf: url)
            #expect(onDisk.range(of: Data(secret)) == nil)
            #expect(try await store.load("missing") == nil)
            try await store.delete("item")
            #expect(try await store.load("item") == nil)
            try await store.delete("item")
        }
    }

    @Test("FileKeyStore refuses a wrong passphrase and a tampered file with a typed error")
    func fileWrongPassphrase() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let store = try FileKeyStore(directory: directory, passphrase: "right", limits: Self.cheap)
            try await store.save([1, 2, 3], as: "item")
            let error = #expect(throws: StationClientError.self) {
                try FileKeyStore(directory: directory, passphrase: "wrong", limits: Self.cheap)
            }
            #expect(error?.kind == .keyStore)
            #expect(error?.message == "wrong passphrase")
            #expect(throws: StationClientError.self) { try FileKeyStore(directory: directory, passphrase: "", limits: Self.cheap) }
            // The right passphrase unlocks the existing store (its own Argon2 cost is kept).
            let reopened = try FileKeyStore(directory: directory, passphrase: "right", limits: .interactive)
            #expect(try await reopened.load("item") == [1, 2, 3])

            // A params file with absurd Argon2 limits is refused before deriving anything.
            try await Fixture.withTemporaryDirectory { other in
                _ = try FileKeyStore(directory: other, passphrase: "p", limits: Self.cheap)
                let params = other.appendingPathComponent("keystore.params")
                var paramBytes = [UInt8](try Data(contentsOf: params))
                paramBytes[21] = 0xFF
                try Data(paramBytes).write(to: params)
                #expect(throws: StationClientError.self) { try FileKeyStore(directory: other, passphrase: "p", limits: Self.cheap) }

                var bytes = [UInt8](try Data(contentsOf: try store.fileURL(for: "item")))
                bytes[bytes.count - 1] ^= 0x80
                try Data(bytes).write(to: try store.fileURL(for: "item"))
                await #expect(throws: StationClientError.self) { try await store.load("item") }

                try Data("not a key store".utf8).write(to: try store.fileURL(for: "junk"))
                await #expect(throws: StationClientError.self) { try await store.load("junk") }
                #expect(throws: StationClientError.self) { try store.fileURL(for: "../escape") }
            }
        }
    }

    @Test("A truncated or extended keystore.params is damaged, not a wrong passphrase")
    func damagedParameters() throws {
        try Fixture.withTemporaryDirectory { directory in
            _ = try FileKeyStore(directory: directory, passphrase: "right", limits: Self.cheap)
            let params = directory.appendingPathComponent("keystore.params")
            let intact = [UInt8](try Data(contentsOf: params))
            for damaged in [Array(intact.prefix(30)), Array(intact.dropLast()), intact + [0], intact + [UInt8](repeating: 7, count: 1 << 20)] {
                try Data(damaged).write(to: params)
                let error = #expect(throws: StationClientError.self) {
                    try FileKeyStore(directory: directory, passphrase: "right", limits: Self.cheap)
                }
                #expect(error?.kind == .keyStore)
                #expect(error?.message == "keystore.params is damaged", "\(damaged.count) bytes")
            }
            try Data(intact).write(to: params)
            _ = try FileKeyStore(directory: directory, passphrase: "right", limits: Self.cheap)
        }
    }

    @Test("An interrupted write leaves the old file intact and no temporary file behind")
    func interruptedWrite() async throws {
        struct PowerCut: Error {}
        try await Fixture.withTemporaryDirectory { directory in
            let store = try FileKeyStore(directory: directory, passphrase: "pass", limits: Self.cheap)
            try await store.save(Array("old value".utf8), as: "credentials")
            let before = try Data(contentsOf: try store.fileURL(for: "credentials"))

            let sawTemporary = Locked<URL?>(nil)
            let failing = try FileKeyStore(directory: directory, passphrase: "pass", limits: Self.cheap) { temporary in
                sawTemporary.withLock { $0 = temporary }
                throw PowerCut()
            }
            await #expect(throws: StationClientError.self) { try await failing.save(Array("new value".utf8), as: "credentials") }
            #expect(sawTemporary.withLock { $0 } != nil)
            #expect(try Data(contentsOf: try store.fileURL(for: "credentials")) == before)
            #expect(try await store.load("credentials") == Array("old value".utf8))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test("Two creators racing to create one store end up with one key: items of either open in both")
    func racingCreators() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            // The first creator stops after finding no keystore.params and goes on once the second
            // has created the store and saved an item in it (as a second process could, meanwhile).
            let firstPaused = DispatchSemaphore(value: 0), secondDone = DispatchSemaphore(value: 0)
            let first = Locked<Result<FileKeyStore, any Error>?>(nil)
            let firstFinished = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let opened = Result { () throws -> FileKeyStore in
                    try FileKeyStore(directory: directory, passphrase: "shared", limits: Self.cheap, beforeRename: { _ in },
                                     afterFindingNoParameters: {
                                         firstPaused.signal()
                                         secondDone.wait()
                                     })
                }
                first.withLock { $0 = opened }
                firstFinished.signal()
            }
            await Self.wait(for: firstPaused)
            let second = try FileKeyStore(directory: directory, passphrase: "shared", limits: Self.cheap)
            try await second.save(Array("saved by the second".utf8), as: "second")
            secondDone.signal()
            await Self.wait(for: firstFinished)
            let firstStore = try #require(first.withLock { $0 }).get()

            #expect(try await firstStore.load("second") == Array("saved by the second".utf8))
            try await firstStore.save(Array("saved by the first".utf8), as: "first")
            #expect(try await second.load("first") == Array("saved by the first".utf8))
            let reopened = try FileKeyStore(directory: directory, passphrase: "shared", limits: Self.cheap)
            #expect(try await reopened.load("first") == Array("saved by the first".utf8))
            #expect(try await reopened.load("second") == Array("saved by the second".utf8))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
            #expect(leftovers.isEmpty)
        }
    }

    /// Waits for `semaphore` on a thread of its own (the cooperative pool may have only two).
    static func wait(for semaphore: DispatchSemaphore) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                semaphore.wait()
                continuation.resume()
            }
        }
    }

    @Test("InMemoryKeyStore stores, replaces and deletes")
    func inMemory() async throws {
        let store = InMemoryKeyStore()
        #expect(await store.load("a") == nil)
        await store.save([1], as: "a")
        await store.save([2, 3], as: "a")
        #expect(await store.load("a") == [2, 3])
        await store.delete("a")
        #expect(await store.load("a") == nil)
    }

    @Test("Credentials survive encoding; damaged bytes give a typed error")
    func credentialsCoding() throws {
        let credentials = DeviceCredentials(
            kemPrivateKey: MLKEM768.PrivateKey.generate(), signingPrivateKey: MLDSA65.PrivateKey.generate(), deviceUID: "Phone-ABC", stationUID: "station",
            stationKEMPublicKeyHex: "00", endpoint: URL(string: "http://station.test:8443")!, ipfsPeerID: "12D3Koo", ipnsName: "k51")
        let decoded = try DeviceCredentials(encoded: credentials.encoded())
        #expect(decoded.deviceUID == "Phone-ABC")
        #expect(decoded.endpoint == credentials.endpoint)
        #expect(decoded.ipnsName == "k51")
        #expect(try decoded.pureKEMKey.expandedRepresentation == credentials.pureKEMKey.expandedRepresentation)
        #expect(try decoded.pureSigningKey.expandedRepresentation == credentials.pureSigningKey.expandedRepresentation)
        #expect(throws: StationClientError.self) { try DeviceCredentials(encoded: SecretBytes(copying: Array("{}".utf8))) }
        #expect(throws: StationClientError.self) { try DeviceCredentials(encoded: SecretBytes(copying: [0xFF, 0x00])) }
        #expect(throws: StationClientError.self) {
            try DeviceCredentials(encoded: SecretBytes(copying: Array(#"{"kem_private_key":"00","signing_private_key":"zz"}"#.utf8)))
        }
    }

    @Test("Credentials travel in zeroizable storage both ways, and the earlier JSON still decodes")
    func credentialsInSecretBytes() throws {
        let kem = MLKEM768.PrivateKey.generate()
        let signing = MLDSA65.PrivateKey.generate()
        let credentials = DeviceCredentials(
            kemPrivateKey: kem, signingPrivateKey: signing, deviceUID: "Phone \"q\"", stationUID: "station",
            stationKEMPublicKeyHex: "00", endpoint: URL(string: "http://station.test")!)
        // The API's types: the encoding is SecretBytes, and decoding takes SecretBytes.
        let encoded: SecretBytes = try credentials.encoded()
        let decode: (SecretBytes) throws -> DeviceCredentials = DeviceCredentials.init(encoded:)
        let decoded = try decode(encoded)
        #expect(decoded.deviceUID == "Phone \"q\"")
        #expect(try decoded.pureKEMKey.expandedSecret == kem.expandedSecret)
        #expect(try decoded.pureSigningKey.expandedSecret == signing.expandedSecret)
        #expect(kem.expandedSecret.withUnsafeBytes { Data($0) } == kem.expandedRepresentation)
        #expect(String(describing: encoded) == "SecretBytes(\(encoded.count) bytes)")
        // The JSON is what earlier versions wrote (the same members, the keys as lowercase hex).
        let object = try #require(try WireJSON.parse(encoded.withUnsafeBytes { [UInt8]($0) }).objectValue)
        #expect(object["kem_private_key"]?.stringValue == Hex.encode(kem.expandedRepresentation))
        #expect(object["signing_private_key"]?.stringValue == Hex.encode(signing.expandedRepresentation))
        #expect(object["version"] == 1 && object["endpoint"]?.stringValue == "http://station.test")
        // An earlier version's bytes (keys after version, pretty-printed) decode too.
        let earlier = """
        {"version": 1, "kem_private_key": "\(Hex.encode(kem.expandedRepresentation))",
         "signing_private_key": "\(Hex.encode(signing.expandedRepresentation))", "device_uid": "d",
         "station_uid": "s", "station_kem_public_key": "00", "endpoint": "http://e.test", "extra": {"a": [1, "}"]}}
        """
        let old = try DeviceCredentials(encoded: SecretBytes(copying: Array(earlier.utf8)))
        #expect(try old.pureKEMKey.expandedSecret == kem.expandedSecret && old.deviceUID == "d")
        // A repeated key member is refused, not resolved either way.
        let twice = #"{"kem_private_key":"00","kem_private_key":"11","signing_private_key":"22"}"#
        #expect(throws: StationClientError.self) { try DeviceCredentials(encoded: SecretBytes(copying: Array(twice.utf8))) }
    }

    @Test("Key stores load and save SecretBytes: FileKeyStore natively, any other store through its arrays")
    func secretItems() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let file = try FileKeyStore(directory: directory, passphrase: "p", limits: Self.cheap)
            let secret = SecretBytes(copying: Array("secret item".utf8))
            try await file.saveSecret(secret, as: "item")
            #expect(try await file.loadSecret("item") == secret)
            #expect(try await file.load("item") == Array("secret item".utf8))
            let memory = InMemoryKeyStore()
            try await memory.saveSecret(secret, as: "item")
            #expect(try await memory.loadSecret("item") == secret)
            // A FollowerIdentity goes the same way.
            let identity = FollowerIdentity.generate(name: "reader")
            try await identity.save(to: file)
            let loaded = try #require(try await FollowerIdentity.load(from: file))
            #expect(try loaded.uid == identity.uid && loaded.pureKEMKey.expandedSecret == identity.pureKEMKey.expandedSecret)
        }
    }

    @Test("FileKeyStore tightens an existing 0777 directory to 0700")
    func tightensDirectory() throws {
        try Fixture.withTemporaryDirectory { directory in
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
            #expect(Self.mode(directory) == 0o777)
            _ = try FileKeyStore(directory: directory, passphrase: "p", limits: Self.cheap)
            #expect(Self.mode(directory) == 0o700)
        }
    }

    static func mode(_ url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
    }

    /// The Argon2 limits `keystore.params` records: operations and memory in KiB.
    static func recordedLimits(_ directory: URL) throws -> (operations: UInt32, memoryKiB: UInt32) {
        let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent("keystore.params")))
        let start = 5 + Argon2.saltByteCount
        try #require(bytes.count >= start + 8)
        func read(_ offset: Int) -> UInt32 { bytes[offset..<(offset + 4)].reduce(0) { ($0 << 8) | UInt32($1) } }
        return (read(start), read(start + 4))
    }

    @Test("A new FileKeyStore costs libsodium's moderate Argon2id (3 passes, 256 MiB) by default")
    func defaultCostIsModerate() throws {
        try Fixture.withTemporaryDirectory { directory in
            _ = try FileKeyStore(directory: directory, passphrase: "p")
            let recorded = try Self.recordedLimits(directory)
            #expect(recorded.operations == 3 && recorded.memoryKiB == 256 * 1024)
            #expect(FileKeyStore.defaultLimits == .moderate)
        }
    }

    @Test("A store created at another cost opens with its recorded cost, which the default does not change")
    func oldStoreKeepsItsCost() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let old = try FileKeyStore(directory: directory, passphrase: "p", limits: Self.cheap)
            try await old.save([7, 7, 7], as: "item")
            let reopened = try FileKeyStore(directory: directory, passphrase: "p")
            #expect(try await reopened.load("item") == [7, 7, 7])
            let recorded = try Self.recordedLimits(directory)
            #expect(recorded.operations == 1 && recorded.memoryKiB == 1024)
        }
    }

    @Test("A rewritten keystore.params asking for more than the store writes is refused before Argon2, with a typed error")
    func rewrittenParametersRefusedBeforeArgon2() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let store = try FileKeyStore(directory: directory, passphrase: "p", limits: Self.cheap)
            try await store.save([5], as: "item")
            let params = directory.appendingPathComponent("keystore.params")
            let original = [UInt8](try Data(contentsOf: params))
            let start = 5 + Argon2.saltByteCount
            func rewrite(operations: UInt32, memoryKiB: UInt32) throws {
                var bytes = original
                for (offset, value) in [(start, operations), (start + 4, memoryKiB)] {
                    for index in 0..<4 { bytes[offset + index] = UInt8((value >> (24 - 8 * UInt32(index))) & 0xFF) }
                }
                try Data(bytes).write(to: params)
            }
            // One pass more than `moderate`, or twice its memory: both within the old absolute caps
            // (16 passes, 1 GiB), so an unbounded store would run Argon2 at that cost first.
            for (operations, memoryKiB) in [(UInt32(4), UInt32(1024)), (1, 512 * 1024)] {
                try rewrite(operations: operations, memoryKiB: memoryKiB)
                let error = #expect(throws: StationClientError.self, "\(operations) passes, \(memoryKiB) KiB") {
                    try FileKeyStore(directory: directory, passphrase: "p")
                }
                #expect(error?.kind == .keyStore)
                #expect(error?.message.contains("outside what this store writes") == true, "\(error?.message ?? "")")
            }
            // A rewrite inside the accepted range costs no more than a normal unlock and is caught
            // after it: the parameters are part of what derives the key, so the check value does not open.
            try rewrite(operations: 2, memoryKiB: 1024)
            let inRange = #expect(throws: StationClientError.self) { try FileKeyStore(directory: directory, passphrase: "p") }
            #expect(inRange?.kind == .keyStore && inRange?.message == "wrong passphrase")
            // The original file opens again: nothing was lost.
            try Data(original).write(to: params)
            #expect(try await FileKeyStore(directory: directory, passphrase: "p").load("item") == [5])

            // A store created costlier than the default opens when its limits are passed, not without.
            try await Fixture.withTemporaryDirectory { costly in
                let limits = Argon2.Limits(operations: 4, memoryBytes: 1 << 20)
                try await FileKeyStore(directory: costly, passphrase: "p", limits: limits).save([6], as: "item")
                #expect(throws: StationClientError.self) { try FileKeyStore(directory: costly, passphrase: "p") }
                #expect(try await FileKeyStore(directory: costly, passphrase: "p", limits: limits).load("item") == [6])
            }
        }
    }

    @Test("A store reopens with its unlocked key (no Argon2); a key of another store, or none, is refused")
    func reopenWithUnlockedKey() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let store = try FileKeyStore(directory: directory, passphrase: "p", limits: Self.cheap)
            try await store.save([1, 2, 3], as: "item")
            let key = store.unlockedKey
            #expect(key.count == 32)
            let reopened = try FileKeyStore(directory: directory, unlockedKey: key)
            #expect(try await reopened.load("item") == [1, 2, 3])
            try await reopened.save([4], as: "other")
            #expect(try await FileKeyStore(directory: directory, passphrase: "p", limits: Self.cheap).load("other") == [4])

            try Fixture.withTemporaryDirectory { elsewhere in
                let foreign = try FileKeyStore(directory: elsewhere, passphrase: "p", limits: Self.cheap).unlockedKey
                #expect(throws: StationClientError.self) { try FileKeyStore(directory: directory, unlockedKey: foreign) }
                try Fixture.withTemporaryDirectory { empty in
                    #expect(throws: StationClientError.self) { try FileKeyStore(directory: empty, unlockedKey: key) }
                }
            }
        }
    }

    @Test("Device uids: sanitized name prefix of 20, dash, 8 characters of a UUID")
    func deviceUID() throws {
        let uuid = try #require(UUID(uuidString: "990DCF48-1234-4567-89AB-CDEF01234567"))
        #expect(DeviceUID.make(name: "Charlie's iPhone 15 Pro Max!", uuid: uuid) == "charliesiphone15prom-990dcf48")
        #expect(DeviceUID.make(name: "  ", uuid: uuid) == "device-990dcf48")
        #expect(DeviceUID.make(name: "lab-box_7", uuid: uuid) == "lab-box7-990dcf48")
        #expect(DeviceUID.make(name: "a") != DeviceUID.make(name: "a"))
    }
}
