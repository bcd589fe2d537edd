// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
import Manifest
import StationClient
import StationEmulator
import TestSupport
import TransportTestSupport
import Testing
import ContentAddressing

/// The `cipher` binary as a subprocess against embedded emulators served on loopback: commands,
/// exit codes and `--json` shapes.
@Suite("cipher CLI", .serialized)
struct CipherCLITests {
    static let commands = ["demo", "pair", "status", "trust", "move", "ls", "put", "get", "share", "rm", "followers", "follow", "following",
                           "unfollow", "read", "sync", "restore-credentials", "lock"]

    /// A paired CLI home against a fresh emulator.
    struct Paired {
        let emulator: StationEmulator
        let url: URL
        let home: TemporaryDirectory
        let environment: [String: String]
        let pairing: [String: Any]

        func cipher(_ arguments: String...) async throws -> CLIResult {
            try await CLIProcess.run(arguments + ["--home", home.url.path], environment: environment)
        }

        /// Runs `cipher` in `directory` (where `get` writes a file under its stored name).
        func cipher(in directory: URL, _ arguments: String...) async throws -> CLIResult {
            try await CLIProcess.run(arguments + ["--home", home.url.path], environment: environment, directory: directory)
        }

        /// Pairs a second device with this station, in process, to publish as another app would.
        func otherDevice() async throws -> StationClient {
            let stationLog = emulator.log
            return try await StationClient.pair(
                endpoint: url, deviceName: "other device",
                configuration: StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore(), transport: emulator.transport)
            ) { _ in stationLog.latestPIN }
        }

        func cipherJSON(_ arguments: String...) async throws -> (CLIResult, [String: Any]) {
            let result = try await CLIProcess.run(arguments + ["--home", home.url.path, "--json"], environment: environment)
            return (result, try result.json())
        }

        func cleanup() {
            emulator.stop()
            home.cleanup()
        }
    }

    /// Waits (up to 60 s) for the emulator's log to show a PIN newer than `after`.
    static func waitForPIN(_ emulator: StationEmulator, after count: Int = 0) async -> String? {
        await eventually(timeout: 60) { emulator.log.pins.count > count } ? emulator.log.pins.last : nil
    }

    /// A home paired with a fresh emulator; with `cheapKeyStore` its key store is made beforehand
    /// at the least cost (``TemporaryDirectory/cipherHome(passphrase:)``), else `cipher pair` makes it.
    static func pairedHome(gateway: Bool = true, cheapKeyStore: Bool = true) async throws -> Paired {
        let emulator = try StationEmulator()
        let url = try emulator.start()
        let home = cheapKeyStore ? try TemporaryDirectory.cipherHome() : try TemporaryDirectory(prefix: "cipher-cli")
        let environment = ["CIPHER_PASSPHRASE": "correct horse battery staple"]
        var arguments = ["pair", url.absoluteString, "--name", "test laptop", "--home", home.url.path, "--json"]
        if gateway, let gatewayURL = emulator.gatewayURL { arguments += ["--gateway", gatewayURL.absoluteString] }
        let result = try await CLIProcess.run(arguments, environment: environment) {
            [await waitForPIN(emulator) ?? ""]
        }
        #expect(result.status == 0, "\(result.stderr)")
        return Paired(emulator: emulator, url: url, home: home, environment: environment, pairing: try result.json())
    }

    // MARK: Help and usage

    @Test func everyCommandHasHelp() async throws {
        let overview = try await CLIProcess.run(["--help"])
        #expect(overview.status == 0)
        for command in Self.commands {
            #expect(overview.stdout.contains("  \(command)"), "overview lists \(command)")
            let help = try await CLIProcess.run([command, "--help"])
            #expect(help.status == 0)
            #expect(help.stdout.hasPrefix("usage: cipher \(command)"), "\(help.stdout)")
            #expect(help.stdout.contains("--json"))
        }
    }

    @Test func usageErrorsExitTwo() async throws {
        #expect(try await CLIProcess.run([]).status == 2)
        #expect(try await CLIProcess.run(["frobnicate"]).status == 2)
        #expect(try await CLIProcess.run(["ls", "--colour"]).status == 2)
        #expect(try await CLIProcess.run(["put"]).status == 2)
        #expect(try await CLIProcess.run(["get", "a", "b"]).status == 2)
        #expect(try await CLIProcess.run(["put", "f", "--audience", "everyone"]).status == 2)
        #expect(try await CLIProcess.run(["put", "f", "--audience", "specific"]).status == 2)
        #expect(try await CLIProcess.run(["share", "f"]).status == 2)
        #expect(try await CLIProcess.run(["pair", "not a url"]).status == 2)
        #expect(try await CLIProcess.run(["followers", "approve"]).status == 2)
        let json = try await CLIProcess.run(["ls", "--bogus", "--json"])
        #expect(json.status == 2)
        let error = try #require(try json.jsonError())
        #expect(error["exit_code"] as? Int == 2)
        #expect(error["kind"] as? String == "usage")
    }

    @Test func credentialsNeedAPassphraseAndAPairing() async throws {
        let home = try TemporaryDirectory(prefix: "cipher-cli")
        defer { home.cleanup() }
        // No terminal and no CIPHER_PASSPHRASE: a usage error, nothing prompted.
        #expect(try await CLIProcess.run(["status", "--home", home.url.path]).status == 2)
        let notPaired = try await CLIProcess.run(["status", "--home", home.url.path, "--json"], environment: ["CIPHER_PASSPHRASE": "pw"])
        #expect(notPaired.status == 1)
        #expect(try notPaired.errorKind() == "notPaired")
        // CIPHER_HOME is honoured like --home: the store created above now needs the same passphrase.
        let wrong = try await CLIProcess.run(["status"], environment: ["CIPHER_PASSPHRASE": "other", "CIPHER_HOME": home.url.path])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("passphrase"), "\(wrong.stderr)")
    }

    // MARK: Pairing

    @Test func pairAndStatus() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        #expect(paired.pairing["station_uid"] as? String == paired.emulator.uid)
        #expect((paired.pairing["device_uid"] as? String)?.hasPrefix("testlaptop-") == true)
        #expect(paired.pairing["endpoint"] as? String == paired.url.absoluteString)

        let (result, status) = try await paired.cipherJSON("status")
        #expect(result.status == 0)
        #expect(status["endpoint"] as? String == paired.url.absoluteString)
        #expect(status["station_uid"] as? String == paired.emulator.uid)
        #expect(status["device_uid"] as? String == paired.pairing["device_uid"] as? String)
        #expect(status["health"] as? String == "healthy")
        #expect(status["posts"] as? Int == 0)
        #expect(status["tls_fingerprint"] == nil, "plain http has no fingerprint")
        let human = try await paired.cipher("status")
        #expect(human.stdout.contains("none (plain http)"))
        #expect(human.stdout.contains(paired.emulator.uid))
    }

    /// Pairing a paired home again refuses, naming what is paired; `--replace` keeps the old
    /// credentials as a backup that `restore-credentials` lists and brings back.
    @Test func pairingAgainNeedsReplaceAndKeepsABackup() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        let firstDevice = try #require(paired.pairing["device_uid"] as? String)
        let refused = try await paired.cipher("pair", paired.url.absoluteString, "--name", "second")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(firstDevice) && refused.stderr.contains(paired.emulator.uid), "\(refused.stderr)")
        #expect(refused.stderr.contains("--replace"))
        #expect(try await paired.cipherJSON("status").1["device_uid"] as? String == firstDevice)
        #expect(try await paired.cipherJSON("restore-credentials").1["backups"] as? [Any] != nil)
        #expect((try await paired.cipherJSON("restore-credentials").1["backups"] as? [Any])?.isEmpty == true)

        let pins = paired.emulator.log.pins.count, emulator = paired.emulator
        let replaced = try await CLIProcess.run(
            ["pair", paired.url.absoluteString, "--name", "second", "--replace", "--home", paired.home.url.path, "--json"],
            environment: paired.environment
        ) { [await Self.waitForPIN(emulator, after: pins) ?? ""] }
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let secondDevice = try #require(try replaced.json()["device_uid"] as? String)
        #expect(secondDevice != firstDevice)
        #expect(replaced.stderr.contains("restore-credentials") && replaced.stderr.contains("stays registered"), "\(replaced.stderr)")

        let (_, listed) = try await paired.cipherJSON("restore-credentials")
        let backups = try #require(listed["backups"] as? [[String: Any]])
        #expect(backups.count == 1)
        #expect(backups.first?["device_uid"] as? String == firstDevice)
        let backup = try #require(backups.first?["name"] as? String)
        #expect(try await paired.cipher("restore-credentials", "device-credentials.backup-none").status == 1)
        let (restore, restored) = try await paired.cipherJSON("restore-credentials", backup)
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restored["restored"] as? String == backup)
        #expect(try await paired.cipherJSON("status").1["device_uid"] as? String == firstDevice)
        // The credentials it replaced are a backup in turn: nothing is lost either way.
        let after = try #require(try await paired.cipherJSON("restore-credentials").1["backups"] as? [[String: Any]])
        #expect(after.map { $0["device_uid"] as? String } == [secondDevice])
        #expect(after.first?["name"] as? String == restored["set_aside"] as? String)
    }

    /// Every file under `directory` with its bytes (the whole home, key store and cache included).
    static func snapshot(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            files[String(url.path.dropFirst(directory.path.count))] = try Data(contentsOf: url)
        }
        return files
    }

    /// The gateway `cipher.json` records.
    static func gateway(_ home: TemporaryDirectory) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: home.file("cipher.json"))) as? [String: Any]
        return object?["gateway"] as? String
    }

    /// `pair --replace` with another station: a failed one changes no file; a successful one
    /// never shows the first station's offline listing as the second's; restoring the first
    /// credentials brings back the settings saved with them (the gateway).
    @Test func pairReplaceKeepsStationsApart() async throws {
        let paired = try await Self.pairedHome(gateway: true)
        defer { paired.cleanup() }
        let firstGateway = try #require(try Self.gateway(paired.home))
        let device = try await paired.otherDevice()
        _ = try await device.publish(data: Data("a".utf8), metadata: DriveFileMetadata(filename: "station-a-secret.txt"),
                                     audience: .selfOnly)
        let (listedA, _) = try await paired.cipherJSON("ls")
        #expect(listedA.status == 0 && listedA.stdout.contains("station-a-secret.txt"), "\(listedA.stderr)")

        // A pairing that fails (nothing listens there) leaves every file as it was.
        let before = try Self.snapshot(paired.home.url)
        let failed = try await paired.cipher("pair", "http://127.0.0.1:1", "--replace", "--gateway", "http://127.0.0.1:2")
        #expect(failed.status == 4, "\(failed.stderr)")
        let after = try Self.snapshot(paired.home.url)
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(after == before, "changed: \(after.keys.filter { after[$0] != before[$0] }.sorted())")
        #expect(try Self.gateway(paired.home) == firstGateway)

        // Paired with station B instead (no gateway), which then goes down: no listing of A shows.
        let stationB = try StationEmulator()
        defer { stationB.stop() }
        let urlB = try stationB.start()
        let replaced = try await CLIProcess.run(
            ["pair", urlB.absoluteString, "--name", "second", "--replace", "--home", paired.home.url.path, "--json"],
            environment: paired.environment
        ) { [await Self.waitForPIN(stationB) ?? ""] }
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try Self.gateway(paired.home) == nil)
        stationB.stop()
        let offline = try await paired.cipher("ls", "--json")
        #expect(offline.status == 4, "\(offline.stderr)")
        #expect(!offline.stdout.contains("station-a-secret.txt") && !offline.stderr.contains("station-a-secret.txt"), "\(offline.stdout)")

        // Back to station A: its credentials, its gateway, its own offline listing.
        let (_, listed) = try await paired.cipherJSON("restore-credentials")
        let backup = try #require((listed["backups"] as? [[String: Any]])?.first?["name"] as? String)
        let (restore, _) = try await paired.cipherJSON("restore-credentials", backup)
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(try Self.gateway(paired.home) == firstGateway)
        let (statusA, status) = try await paired.cipherJSON("status")
        #expect(statusA.status == 0 && status["station_uid"] as? String == paired.emulator.uid, "\(statusA.stderr)")
        paired.emulator.stop()
        let offlineA = try await paired.cipher("ls", "--json")
        #expect(offlineA.status == 0 && offlineA.stdout.contains("station-a-secret.txt"), "\(offlineA.stderr)")
    }

    @Test func wrongPINsAreRefusedWithExitThree() async throws {
        let emulator = try StationEmulator()
        defer { emulator.stop() }
        let url = try emulator.start()
        let home = try TemporaryDirectory(prefix: "cipher-cli")
        defer { home.cleanup() }
        let result = try await CLIProcess.run(["pair", url.absoluteString, "--home", home.url.path, "--json"],
                                              environment: ["CIPHER_PASSPHRASE": "pw"]) {
            guard let pin = await Self.waitForPIN(emulator), let value = Int(pin) else { return [] }
            let wrong = String(format: "%06d", (value + 1) % 1_000_000)
            return Array(repeating: wrong, count: 5)
        }
        #expect(result.status == 3, "\(result.stderr)")
        #expect(try result.errorKind() == "pairing")
        // The retry lines are words, not the SDK's enum.
        #expect(result.stderr.contains("That PIN was refused: wrong PIN (4 attempts left)."), "\(result.stderr)")
        #expect(!result.stderr.contains("wrongPIN("))
    }

    @Test func unreachableStationsExitFour() async throws {
        let home = try TemporaryDirectory(prefix: "cipher-cli")
        defer { home.cleanup() }
        // Nothing listens on port 1.
        let pair = try await CLIProcess.run(["pair", "http://127.0.0.1:1", "--home", home.url.path, "--json"],
                                            environment: ["CIPHER_PASSPHRASE": "pw"])
        #expect(pair.status == 4)
        #expect(try pair.errorKind() == "unreachable")

        // A paired station that went away.
        let paired = try await Self.pairedHome(gateway: false)
        defer { paired.cleanup() }
        paired.emulator.stop()
        #expect(try await paired.cipher("status").status == 4)
    }

    // MARK: The drive

    @Test func putListGetShareRemove() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        var rng = SplitMix64(seed: 8)
        let original = Data(rng.bytes(300_000))
        let file = paired.home.file("photo.jpg")
        try original.write(to: file)

        let (put, posted) = try await paired.cipherJSON("put", file.path)
        #expect(put.status == 0, "\(put.stderr)")
        let cid = try #require(posted["post_cid"] as? String)
        // The same name again is refused (no terminal to ask) unless --force; nothing is uploaded.
        let again = try await paired.cipher("put", file.path)
        #expect(again.status == 1 && again.stderr.contains("--force") && again.stderr.contains(cid), "\(again.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 1)
        #expect(posted["audience_mode"] as? String == "self")
        #expect(posted["filename"] as? String == "photo.jpg")
        #expect(posted["mime_type"] as? String == "image/jpeg")
        #expect(posted["size_bytes"] as? Int == original.count)
        #expect(posted["public"] as? Bool == false)

        let (ls, listing) = try await paired.cipherJSON("ls")
        #expect(ls.status == 0)
        #expect(listing["namespace"] as? String == "drive")
        #expect(listing["offline"] as? Bool == false)
        let posts = try #require(listing["posts"] as? [[String: Any]])
        #expect(posts.map { $0["post_cid"] as? String } == [cid])
        #expect(posts.first?["filename"] as? String == "photo.jpg")
        #expect((listing["skipped"] as? [Any])?.isEmpty == true)
        let human = try await paired.cipher("ls")
        #expect(human.stdout.contains(cid) && human.stdout.contains("photo.jpg"))

        // The metadata is DESIGN's drive file metadata, readable by any drive client.
        let entry = try #require(paired.emulator.manifest.entry(forPostCID: cid))
        #expect(entry.client == "drive")

        // By name and by CID.
        let byName = paired.home.file("by-name.jpg")
        let (get, got) = try await paired.cipherJSON("get", "photo.jpg", "-o", byName.path)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(got["post_cid"] as? String == cid)
        #expect(got["size_bytes"] as? Int == original.count)
        #expect(got["station"] == nil)  // only `read --get` names a station
        #expect(try Data(contentsOf: byName) == original)
        let byCID = paired.home.file("by-cid.jpg")
        #expect(try await paired.cipher("get", cid, "-o", byCID.path).status == 0)
        #expect(try Data(contentsOf: byCID) == original)
        // An existing file is replaced only with --force, by the stored name or -o alike.
        try Data("mine".utf8).write(to: byCID)
        let kept = try await paired.cipher("get", cid, "-o", byCID.path)
        #expect(kept.status == 1 && kept.stderr.contains("--force"), "\(kept.stderr)")
        #expect(try Data(contentsOf: byCID) == Data("mine".utf8))
        let directory = paired.home.file("downloads")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: directory.appendingPathComponent("photo.jpg"))
        #expect(try await paired.cipher(in: directory, "get", "photo.jpg").status == 1)
        #expect(try Data(contentsOf: directory.appendingPathComponent("photo.jpg")) == Data("mine".utf8))
        #expect(try await paired.cipher(in: directory, "get", "photo.jpg", "--force").status == 0)
        #expect(try Data(contentsOf: directory.appendingPathComponent("photo.jpg")) == original)
        #expect(try await paired.cipher("get", cid, "-o", byCID.path, "--force").status == 0)
        #expect(try Data(contentsOf: byCID) == original)

        // Share publishes the file anew (fresh key, new CID) and removes the old entry: the
        // station's in-place share would destroy the bytes.
        let (share, shared) = try await paired.cipherJSON("share", "photo.jpg", "--audience", "all")
        #expect(share.status == 0, "\(share.stderr)")
        let newCID = try #require(shared["post_cid"] as? String)
        #expect(newCID != cid)
        #expect(shared["previous_post_cid"] as? String == cid)
        #expect(shared["previous_entry_removed"] as? Bool == true)
        #expect(shared["audience_mode"] as? String == "all")
        #expect(shared["envelopes_cid"] as? String == paired.emulator.manifest.entry(forPostCID: newCID)?.entry.envelopesCID)
        #expect(paired.emulator.manifest.entry(forPostCID: cid) == nil)
        #expect(paired.emulator.manifest.entry(forPostCID: newCID)?.entry.audienceMode == .all)
        let humanShare = try await paired.cipher("share", "photo.jpg", "--audience", "self")
        #expect(humanShare.stdout.contains("published anew as"), "\(humanShare.stdout)")
        let afterShare = paired.home.file("after-share.jpg")
        #expect(try await paired.cipher("get", "photo.jpg", "-o", afterShare.path).status == 0)
        #expect(try Data(contentsOf: afterShare) == original)
        let current = try #require(paired.emulator.manifest.allPosts.first?.entry.postCID)

        let (rm, removed) = try await paired.cipherJSON("rm", current)
        #expect(rm.status == 0)
        #expect(removed["removed"] as? Bool == true)
        #expect(paired.emulator.manifest.entry(forPostCID: current) == nil)
        // Gone: a name that matches nothing is a plain failure.
        #expect(try await paired.cipher("get", "photo.jpg").status == 1)
    }

    @Test func ambiguousNamesFailListingTheirCIDs() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        var cids: [String] = []
        for (index, folder) in ["a", "b"].enumerated() {
            let directory = paired.home.url.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("notes.txt")
            try Data("version \(index)".utf8).write(to: file)
            // Two files of one name: the second on purpose.
            let (result, json) = index == 0 ? try await paired.cipherJSON("put", file.path)
                : try await paired.cipherJSON("put", file.path, "--force")
            #expect(result.status == 0, "\(result.stderr)")
            cids.append(try #require(json["post_cid"] as? String))
        }
        for command in ["get", "rm"] {
            let result = try await paired.cipher(command, "notes.txt")
            #expect(result.status == 1)
            for cid in cids { #expect(result.stderr.contains(cid), "\(command) lists \(cid)") }
        }
        #expect(paired.emulator.manifest.posts(in: "drive").count == 2, "nothing was removed")
    }

    @Test func audiencesAndPublicPosts() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        let file = paired.home.file("hello.txt")
        try Data("hello world".utf8).write(to: file)

        // A follower to name in --to.
        let follower = FollowerIdentity.generate(name: "friend")
        _ = try await follower.sendFollowRequest(to: paired.url, transport: paired.emulator.transport)
        let (pending, pendingJSON) = try await paired.cipherJSON("followers", "pending")
        #expect(pending.status == 0)
        #expect((pendingJSON["pending"] as? [[String: Any]])?.map { $0["uid"] as? String } == [follower.uid])
        // Labelled columns, one line per follower, no trailing spaces.
        let human = try await paired.cipher("followers", "pending").stdout.split(separator: "\n").map(String.init)
        #expect(human.first?.hasPrefix("UID") == true && human.first?.contains("DEVICES") == true, "\(human)")
        #expect(human.filter { $0.hasPrefix(follower.uid) }.count == 1, "\(human)")
        #expect(human.allSatisfy { !$0.hasSuffix(" ") }, "\(human)")
        let (approve, approved) = try await paired.cipherJSON("followers", "approve", follower.uid)
        #expect(approve.status == 0, "\(approve.stderr)")
        #expect(approve.stderr.isEmpty || !approve.stderr.contains("approve_follower"))
        #expect(approved["uid"] as? String == follower.uid)
        let (list, listed) = try await paired.cipherJSON("followers")
        #expect(list.status == 0)
        #expect((listed["followers"] as? [[String: Any]])?.contains { $0["uid"] as? String == follower.uid } == true)

        let (specific, specificJSON) = try await paired.cipherJSON("put", file.path, "--audience", "specific", "--to", follower.uid)
        #expect(specific.status == 0, "\(specific.stderr)")
        #expect(specificJSON["audience_mode"] as? String == "specific")
        let specificCID = try #require(specificJSON["post_cid"] as? String)
        #expect(paired.emulator.manifest.entry(forPostCID: specificCID)?.entry.audienceUIDs == [follower.uid])

        let (all, allJSON) = try await paired.cipherJSON("put", file.path, "--audience", "all", "--force")
        #expect(all.status == 0)
        #expect(allJSON["audience_mode"] as? String == "all")

        // Standard input is not a terminal here, so --public does not ask.
        let (pub, pubJSON) = try await paired.cipherJSON("put", file.path, "--public", "--force")
        #expect(pub.status == 0, "\(pub.stderr)")
        #expect(pubJSON["audience_mode"] as? String == "public")
        #expect(pubJSON["public"] as? Bool == true)
        #expect(pubJSON["envelopes_cid"] == nil)
        let publicCID = try #require(pubJSON["post_cid"] as? String)
        let out = paired.home.file("public-copy.txt")
        #expect(try await paired.cipher("get", publicCID, "-o", out.path).status == 0)
        #expect(try Data(contentsOf: out) == Data("hello world".utf8))
        #expect(try await paired.cipher("put", file.path, "--public", "--audience", "all").status == 2)

        let removal = try await paired.cipher("followers", "remove", follower.uid)
        #expect(removal.status == 0)
        #expect(removal.stdout.contains("removed \(follower.uid)") && !removal.stdout.contains("remove_follower"), "\(removal.stdout)")
        #expect(try await paired.cipherJSON("followers").1["followers"] as? [Any] != nil)
        #expect((try await paired.cipherJSON("followers").1["followers"] as? [[String: Any]])?.contains { $0["uid"] as? String == follower.uid } == false)
        // A station refusal (unknown follower, 404) is exit 3.
        #expect(try await paired.cipher("followers", "approve", "nobody-00000000").status == 3)
    }

    /// Another station served on loopback, with its gateway and its own owner app paired in process.
    static func otherStation() async throws -> (StationEmulator, URL, URL, StationClient) {
        let other = try StationEmulator()
        do {
            let otherURL = try other.start()
            let otherGateway = try #require(other.gatewayURL)
            let owner = try await StationClient.pair(
                endpoint: otherURL, deviceName: "other owner",
                configuration: StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore(), transport: other.transport)
            ) { _ in other.log.latestPIN }
            return (other, otherURL, otherGateway, owner)
        } catch {
            other.stop()
            throw error
        }
    }

    @Test func followUnfollowAndRead() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        let (other, otherURL, otherGateway, owner) = try await Self.otherStation()
        defer { other.stop() }

        let (follow, followed) = try await paired.cipherJSON("follow", otherURL.absoluteString)
        #expect(follow.status == 0, "\(follow.stderr)")
        #expect(followed["uid"] as? String == other.uid)
        let followerUID = try #require(followed["follower_uid"] as? String)
        #expect(try await owner.pendingFollowers().map(\.uid) == [followerUID])

        // Before approval nothing is readable; after it, posts shared with all followers are.
        _ = try await owner.approveFollower(uid: followerUID)
        _ = try await owner.publish(data: Data("shared".utf8), metadata: DriveFileMetadata(filename: "shared.txt"), audience: .allFollowers)
        _ = try await owner.publish(data: Data("private".utf8), metadata: DriveFileMetadata(filename: "private.txt"))
        let (read, readJSON) = try await paired.cipherJSON("read", otherURL.absoluteString, "--gateway", otherGateway.absoluteString)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(readJSON["follower_uid"] as? String == followerUID)
        #expect((readJSON["posts"] as? [[String: Any]])?.map { $0["filename"] as? String } == ["shared.txt"])

        // --get downloads a shared post by name (to a file) or by CID (to standard output).
        let saved = paired.home.file("from-other.txt")
        let (get, getJSON) = try await paired.cipherJSON("read", otherURL.absoluteString, "--gateway", otherGateway.absoluteString,
                                                         "--get", "shared.txt", "-o", saved.path)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(try Data(contentsOf: saved) == Data("shared".utf8))
        #expect(getJSON["filename"] as? String == "shared.txt")
        #expect(getJSON["size_bytes"] as? Int == 6)
        #expect(getJSON["station"] as? String == otherURL.absoluteString && getJSON["output"] as? String == saved.path)
        let sharedCID = try #require(getJSON["post_cid"] as? String)
        let byCID = try await paired.cipher("read", otherURL.absoluteString, "--gateway", otherGateway.absoluteString,
                                            "--get", sharedCID, "-o", "-")
        #expect(byCID.status == 0, "\(byCID.stderr)")
        #expect(byCID.stdout == "shared")
        // A post not shared with this follower is not found, and nothing is written.
        let refused = paired.home.file("private.txt")
        let notShared = try await paired.cipher("read", otherURL.absoluteString, "--gateway", otherGateway.absoluteString,
                                                "--get", "private.txt", "-o", refused.path)
        #expect(notShared.status != 0)
        #expect(notShared.stderr.contains("private.txt"))
        #expect(!FileManager.default.fileExists(atPath: refused.path))
        #expect(try await paired.cipher("read", otherURL.absoluteString, "-o", saved.path).status == 2)

        // The station says "ok" to any /unfollow: the CLI refuses what is not followed.
        let stranger = try await paired.cipher("unfollow", "no-such-uid")
        #expect(stranger.status == 1 && stranger.stderr.contains("not a followed station"), "\(stranger.stderr)")
        // By URL: the uid comes from following.json.
        let (unfollow, unfollowed) = try await paired.cipherJSON("unfollow", otherURL.absoluteString)
        #expect(unfollow.status == 0, "\(unfollow.stderr)")
        #expect(unfollowed["uid"] as? String == other.uid)
        #expect(try await paired.cipher("unfollow", other.uid).status == 1, "no longer followed")
    }

    @Test func followingShowsWhereTheFollowerStands() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        let (other, otherURL, otherGateway, owner) = try await Self.otherStation()
        defer { other.stop() }
        func status() async throws -> (stdout: String, row: [String: Any]?) {
            let (result, json) = try await paired.cipherJSON("following")
            #expect(result.status == 0, "\(result.stderr)")
            let human = try await paired.cipher("following").stdout
            return (human, (json["following"] as? [[String: Any]])?.first { $0["uid"] as? String == other.uid })
        }
        #expect(try await paired.cipher("following").stdout.contains("not following any station"))

        // The handle keeps the gateway given with --gateway: `read` and `following` use it.
        let (follow, followed) = try await paired.cipherJSON("follow", otherURL.absoluteString, "--gateway", otherGateway.absoluteString)
        #expect(follow.status == 0, "\(follow.stderr)")
        #expect(followed["gateway"] as? String == otherGateway.absoluteString)
        let followerUID = try #require(followed["follower_uid"] as? String)

        // The other station has published no social graph yet: the request was sent, so awaiting approval.
        let unpublished = try await status()
        #expect(unpublished.row?["status"] as? String == "awaitingApproval")
        #expect(unpublished.stdout.contains("awaiting approval"), "\(unpublished.stdout)")

        // Its owner approves someone else: the graph is published without this follower.
        let carol = FollowerIdentity.generate(name: "carol")
        _ = try await carol.sendFollowRequest(to: otherURL, transport: other.transport)
        _ = try await owner.approveFollower(uid: carol.uid)
        let pending = try await status()
        #expect(pending.row?["status"] as? String == "awaitingApproval")
        #expect(pending.stdout.contains("awaiting approval"), "\(pending.stdout)")
        // `read` says why its listing is empty (through the kept gateway: no --gateway here).
        _ = try await owner.publish(data: Data("news".utf8), metadata: DriveFileMetadata(filename: "news.txt"), audience: .allFollowers)
        let read = try await paired.cipher("read", otherURL.absoluteString)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("nothing shared") && read.stdout.contains("awaiting approval"), "\(read.stdout)")
        let (_, readJSON) = try await paired.cipherJSON("read", otherURL.absoluteString)
        #expect(readJSON["follow_status"] as? String == "awaitingApproval")

        _ = try await owner.approveFollower(uid: followerUID)
        #expect(try await status().row?["status"] as? String == "approved")
        let (listed, listedJSON) = try await paired.cipherJSON("read", otherURL.absoluteString)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect((listedJSON["posts"] as? [[String: Any]])?.map { $0["filename"] as? String } == ["news.txt"])
        // The approval seen is kept in following.json, which tells a later removal from a pending request.
        let kept = try String(contentsOf: paired.home.url.appendingPathComponent("following.json"), encoding: .utf8)
        #expect(kept.contains("\"was_approved\" : true"), "\(kept)")

        _ = try await owner.removeFollower(uid: followerUID)
        let removed = try await status()
        #expect(removed.row?["status"] as? String == "removed")
        #expect(removed.stdout.contains("removed"), "\(removed.stdout)")
    }

    @Test func aStoredNameOfADashIsAFileNotStandardOutput() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        let plaintext = "the plaintext of a file named -"
        let post = try await paired.otherDevice().publish(data: Data(plaintext.utf8), metadata: DriveFileMetadata(filename: "-"))
        let directory = paired.home.url.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        let byName = try await paired.cipher(in: directory, "get", "-")
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect(!byName.stdout.contains(plaintext))
        #expect(try String(contentsOf: directory.appendingPathComponent("-"), encoding: .utf8) == plaintext)
        // Only an explicit -o - means standard output.
        let explicit = try await paired.cipher(in: directory, "get", post.postCID, "-o", "-")
        #expect(explicit.status == 0, "\(explicit.stderr)")
        #expect(explicit.stdout == plaintext)
    }

    // MARK: Untrusted text on the terminal

    static let hostileName = "report\u{1b}]0;owned\u{07}\u{1b}[2K\u{1b}[1A\rinnocent.pdf"

    @Test func controlCharactersFromTheStationAreMadeVisible() async throws {
        let paired = try await Self.pairedHome()
        defer { paired.cleanup() }
        // Another device of the same station names a file with escape sequences.
        let other = try await paired.otherDevice()
        let post = try await other.publish(data: Data("pdf".utf8), metadata: DriveFileMetadata(filename: Self.hostileName))
        let visible = #"report\u{1b}]0;owned\u{7}\u{1b}[2K\u{1b}[1A\u{d}innocent.pdf"#

        let listing = try await paired.cipher("ls")
        #expect(listing.status == 0, "\(listing.stderr)")
        #expect(listing.stdout.contains(visible), "\(listing.stdout.debugDescription)")
        #expect(!Self.hasControlCharacters(listing.stdout.replacingOccurrences(of: "\n", with: "")))
        // --json keeps the exact name.
        let (_, json) = try await paired.cipherJSON("ls")
        #expect((json["posts"] as? [[String: Any]])?.first?["filename"] as? String == Self.hostileName)

        let saved = try await paired.cipher("get", post.postCID, "-o", paired.home.file("out.pdf").path)
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains(visible))
        #expect(!Self.hasControlCharacters(saved.stdout.replacingOccurrences(of: "\n", with: "")))
        let removed = try await paired.cipher("rm", post.postCID)
        #expect(removed.stdout.contains(visible))
        #expect(!Self.hasControlCharacters(removed.stdout.replacingOccurrences(of: "\n", with: "")))

        // The station's own error text.
        paired.emulator.faults.failNextRequests(1, status: 400, body: #"{"detail":"\u001b]0;owned\u0007\u001b[2K"}"#)
        let refused = try await paired.cipher("ls")
        #expect(refused.status == 3)
        #expect(refused.stderr.contains(#"\u{1b}]0;owned\u{7}\u{1b}[2K"#), "\(refused.stderr.debugDescription)")
        #expect(!Self.hasControlCharacters(refused.stderr.replacingOccurrences(of: "\n", with: "")))
    }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    // MARK: Demo

    @Test func demoRunsEveryStep() async throws {
        let result = try await CLIProcess.run(["demo"])
        #expect(result.status == 0, "\(result.stderr)")
        for step in 1...11 { #expect(result.stdout.contains(String(format: "[%2d/11]", step)), "step \(step)") }
        #expect(result.stdout.contains("200000 bytes, identical"))
        #expect(result.stdout.contains("reads news.txt and not report.bin"))
        #expect(result.stdout.contains("notes sees 1 post, drive sees 2 posts"))
        #expect(result.stdout.contains("demo complete: 11 steps"))

        let json = try await CLIProcess.run(["demo", "--json"])
        #expect(json.status == 0)
        let steps = try #require(try json.json()["steps"] as? [[String: Any]])
        #expect(steps.count == 11)
        #expect(steps.map { $0["number"] as? Int } == Array(1...11))
        #expect(steps.allSatisfy { ($0["milliseconds"] as? Double).map { $0 >= 0 } == true && $0["title"] is String })
        #expect(try json.json()["total_ms"] is Double)
    }
}
#endif
