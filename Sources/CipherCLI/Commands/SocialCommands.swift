import Foundation
import Manifest
import StationClient
import Transport
import OrderedJSON
import ContentAddressing

/// `cipher followers [pending|approve UID|remove UID]`.
enum FollowersCommand: Command {
    static let spec = CommandSpec(
        name: "followers", arguments: "[pending|approve UID|remove UID]",
        summary: "list approved followers, pending requests, or approve/remove one", positionals: 0...2)

    struct Row: Encodable {
        var uid: String
        var deviceUID: String?
        var alias: String?
        var endpoint: String?
    }

    struct ListOutput: Encodable {
        var followers: [Row]?
        var pending: [Row]?
    }

    struct ChangeOutput: Encodable {
        var action: String
        var uid: String
    }

    static func run(_ context: CommandContext) async throws {
        let positionals = context.arguments.positionals
        let console = context.console
        switch (positionals.first, positionals.count) {
        case (nil, _):
            let client = try await context.client()
            let rows = try await client.followers().map { Row(uid: $0.uid, alias: $0.alias, endpoint: $0.endpoint) }
            console.sayTable(["UID", "NAME", "ENDPOINT"], rows.map { [$0.uid, $0.alias ?? "-", $0.endpoint ?? "-"] }, empty: "no followers")
            console.emit(ListOutput(followers: rows))
        case ("pending", 1):
            let client = try await context.client()
            let rows = try await client.pendingFollowers().map {
                Row(uid: $0.uid, deviceUID: $0.deviceUID, alias: $0.alias, endpoint: $0.endpoint)
            }
            if rows.isEmpty { console.say("no pending follow requests") }
            // One line per follower, its devices counted (a request names one or more).
            var order: [String] = []
            var devices: [String: Int] = [:]
            for row in rows {
                if devices[row.uid] == nil { order.append(row.uid) }
                devices[row.uid, default: 0] += 1
            }
            if !order.isEmpty {
                let table = order.map { uid in
                    [uid, rows.first { $0.uid == uid }?.alias ?? "-", "\(devices[uid] ?? 0)"]
                }
                console.sayTable(["UID", "NAME", "DEVICES"], table)
                console.say("approve one with: cipher followers approve UID")
            }
            console.emit(ListOutput(pending: rows))
        case ("approve", 2), ("remove", 2):
            let client = try await context.client()
            let uid = positionals[1]
            let response = positionals[0] == "approve"
                ? try await client.approveFollower(uid: uid) : try await client.removeFollower(uid: uid)
            if positionals[0] == "approve" {
                let count = response.devicesApproved.map { " (\($0) device\($0 == 1 ? "" : "s"))" } ?? ""
                console.say("approved \(response.uid)\(count): it is now a follower")
            } else {
                console.say("removed \(response.uid): it is no longer a follower")
            }
            console.emit(ChangeOutput(action: response.action, uid: response.uid))
        default:
            throw CLIError.usage("usage: cipher \(spec.usage)")
        }
    }
}

/// `cipher follow URL [--fingerprint PIN] [--gateway URL]`: follows the station and keeps its
/// handle (with the TLS key it was trusted by and the gateway to read it through) in
/// `following.json`, for `cipher read` and `cipher following`.
enum FollowCommand: Command {
    static let spec = CommandSpec(
        name: "follow", arguments: "URL [--fingerprint sha256//BASE64] [--gateway URL]",
        summary: "ask the station at URL to let you follow it and record the follow on your station",
        options: [
            .fingerprint(help: "its TLS key, read on that station (pins it without asking; the key kept from an earlier follow otherwise)"),
            OptionSpec(names: ["--gateway"], help: "the IPFS gateway to read it through, kept with it (default: the gateway given at pairing)",
                       value: "URL"),
        ],
        positionals: 1...1)

    struct Output: Encodable {
        var uid: String
        var endpoint: String
        var followerUID: String
        var request: String
        var tlsPin: String?
        var gateway: String?
    }

    static func run(_ context: CommandContext) async throws {
        let url = try ParsedArguments.url(context.arguments.positionals[0])
        // A key trusted before is expected again: a changed one is refused until given on purpose.
        let kept = try context.home.followedStation(at: url)
        let trust = try PairCommand.trust(context.arguments, console: context.console, kept: kept?.publicKeyPin)
        let client = try await context.client()
        let settings = try context.home.loadSettings()
        // Their station seals our envelopes to the follower identity's key; its owner approves it there.
        let gateway = try context.arguments.value("--gateway").map(ParsedArguments.url) ?? kept?.gateway
        var followed: FollowedStationHandle
        do {
            followed = try await client.follow(stationAt: url, trust: trust, name: settings.deviceName ?? "cipher")
            followed.gateway = gateway
        } catch let error as StationClientError where error.kind == .untrustedKey || error.kind == .keyChanged {
            // The followed station's key (this station's own key change keeps its own advice).
            let ownPins = await client.activePins
            guard error.kind == .untrustedKey || !(error.expectedFingerprint.map(ownPins.contains) ?? false) else { throw error }
            throw CLIError.followedStation(error, url)
        }
        try context.home.keepFollowed(followed)
        let output = Output(uid: followed.uid, endpoint: url.absoluteString, followerUID: followed.followerUID,
                            request: followed.requestStatus ?? "sent", tlsPin: followed.publicKeyPin?.pinString,
                            gateway: followed.gateway?.absoluteString)
        context.console.say("following \(followed.uid) at \(url.absoluteString); your follow request (as \(followed.followerUID)) waits for its owner's approval")
        if let pin = followed.publicKeyPin { context.console.say("TLS key pinned: \(pin.pinString)") }
        context.console.emit(output)
    }
}

/// `cipher following`: each station followed from this device (`following.json`) with where the
/// follower stands there, read from what that station publishes; what was learned (an approval,
/// its IPNS name) is kept in `following.json`.
enum FollowingCommand: Command {
    static let spec = CommandSpec(
        name: "following",
        summary: "list the stations you follow and whether each approved you (awaiting approval, approved, removed, nothing known)")

    struct Row: Encodable {
        var uid: String
        var endpoint: String
        var followerUID: String
        var status: String
        var explanation: String
        var gateway: String?
        var error: String?
    }

    struct Output: Encodable {
        var following: [Row]
    }

    static func run(_ context: CommandContext) async throws {
        let client = try await context.client()
        var rows: [Row] = []
        for handle in try context.home.loadFollowing() {
            var row = Row(uid: handle.uid, endpoint: handle.endpoint.absoluteString, followerUID: handle.followerUID, status: "unknown",
                          explanation: "", gateway: handle.gateway?.absoluteString)
            do {
                let standing = try await client.followStatus(of: handle)
                row.status = standing.status.description
                row.explanation = standing.status.explanation
                var updated = handle
                updated.record(standing)
                if updated != handle { try context.home.keepFollowed(updated) }
            } catch let error as StationClientError {
                // One station that cannot be read does not hide the others.
                row.explanation = "unknown: \(error.message)"
                row.error = error.description
            }
            rows.append(row)
        }
        let console = context.console
        console.sayTable(["UID", "ENDPOINT", "STATUS"], rows.map { [$0.uid, $0.endpoint, $0.explanation] },
                         empty: "not following any station from this device (cipher follow URL)")
        console.emit(Output(following: rows))
    }
}

/// `cipher unfollow UID`.
enum UnfollowCommand: Command {
    static let spec = CommandSpec(name: "unfollow", arguments: "UID|URL", summary: "stop following a station (by its uid or its URL)",
                                  positionals: 1...1)

    struct Output: Encodable {
        var uid: String
        var action: String
    }

    static func run(_ context: CommandContext) async throws {
        let reference = context.arguments.positionals[0]
        let client = try await context.client()
        // The station answers every /unfollow with success, even for a uid it never followed:
        // check first that this one is followed, here (following.json) or on the station.
        let kept = try context.home.loadFollowing()
        let byURL = URL(string: reference).flatMap { url in url.host == nil ? nil : kept.first { Home.sameEndpoint($0.endpoint, url) } }
        let uid = byURL?.uid ?? reference
        let followedHere = kept.contains { $0.uid == uid }
        let followedThere = try await client.following().contains { $0.uid == uid }
        guard followedHere || followedThere else {
            let known = Set(kept.map(\.uid)).sorted()
            throw CLIError.failure("\(reference) is not a followed station" + (known.isEmpty ? "" : " (followed: \(known.joined(separator: ", ")))"))
        }
        let response = try await client.unfollow(uid: uid)
        try context.home.forgetFollowed(uid: uid)
        let place = byURL.map { " at \($0.endpoint.absoluteString)" } ?? ""
        context.console.say("unfollowed \(uid)\(place)")
        context.console.emit(Output(uid: uid, action: response.action))
    }
}

/// `cipher read URL [--get NAME|CID [-o FILE]]`.
enum ReadCommand: Command {
    static let spec = CommandSpec(
        name: "read", arguments: "URL [--gateway URL] [--fingerprint sha256//BASE64] [--namespace drive] [--get NAME|CID [-o FILE] [--force]]",
        summary: "list the posts a followed station shares with you, or download one",
        options: [
            OptionSpec(names: ["--gateway"], help: "the IPFS gateway to read it through (default: the gateway given at pairing)", value: "URL"),
            OptionSpec(names: ["--namespace"], help: "the namespace to read (default: drive)", value: "NAME"),
            OptionSpec(names: ["--get"], help: "download the post with this CID or exact filename", value: "NAME|CID"),
            OptionSpec(names: ["--output", "-o"], help: "with --get: where to write it (default: its filename here; - for standard output)",
                       value: "FILE"),
            OptionSpec(names: ["--force"], help: "with --get: replace the file if it exists (only once the download verified)"),
            .fingerprint(help: "its TLS key, read on that station (a self-signed station not followed with `cipher follow --fingerprint`)"),
        ],
        positionals: 1...1)

    struct Output: Encodable {
        var station: String
        var followerUID: String
        var posts: [FileRow]
        var skipped: [SkippedRow]
        /// When nothing is listed: where the follower stands (`awaitingApproval`, `approved`, …), when known.
        var followStatus: String?
    }

    static func run(_ context: CommandContext) async throws {
        let url = try ParsedArguments.url(context.arguments.positionals[0])
        let reference = context.arguments.value("--get")
        if reference == nil, context.arguments.value("--output") != nil { throw CLIError.usage("-o FILE needs --get NAME|CID") }
        let client = try await context.client()
        let transport = client.configuration.transport
        let kept = try context.home.followedStation(at: url)
        let gateway: IPFSGateway
        if let given = context.arguments.value("--gateway") {
            gateway = IPFSGateway(baseURL: try ParsedArguments.url(given), transport: transport)
        } else if let keptGateway = kept?.gateway {
            gateway = IPFSGateway(baseURL: keptGateway, transport: transport)
        } else if let configured = client.configuration.gateway {
            gateway = configured
        } else {
            throw CLIError.usage("reading another station needs an IPFS gateway: --gateway URL (or pair with --gateway)")
        }
        guard let identity = try await FollowerIdentity.load(from: client.configuration.keyStore) else {
            throw CLIError.failure("no follower identity yet: run `cipher follow \(url.absoluteString)` first")
        }
        // A station `cipher follow` followed is read with the TLS key it was trusted by, unless
        // --fingerprint gives the key to expect.
        let given = try context.arguments.fingerprint()
        let reader: FollowedStationReader
        if var kept {
            if let given { kept.publicKeyPin = given }
            reader = try await client.reader(for: kept, gateway: gateway).reader
        } else {
            reader = FollowedStationReader(identity: identity, gateway: gateway, transport: transport, pins: given.map { [$0] } ?? [],
                                           configuration: client.configuration)
        }
        let namespace = context.arguments.value("--namespace") ?? DriveFiles.namespace
        do {
            try await read(reference, from: url, reader: reader, namespace: namespace, handle: kept, context: context)
        } catch let error as StationClientError where [.keyChanged, .untrustedKey].contains(error.kind) {
            throw CLIError.followedStation(error, url, command: given == nil ? "follow" : "read")
        } catch let error as StationClientError where error.transportError?.kind == .tlsFailure && reader.pins.isEmpty {
            // No key to expect and no authority vouches for the certificate: say so as `follow` does.
            throw CLIError.followedStation(await untrusted(url, error: error, transport: transport), url, command: "read")
        }
    }

    /// The refusal of a self-signed station read without a pin, naming the key it presents.
    static func untrusted(_ url: URL, error: StationClientError, transport: any HTTPTransport) async -> StationClientError {
        var refused = StationClientError(
            .untrustedKey, operation: "reading \(url.absoluteString)",
            message: "no trusted authority signed the station's certificate, and no key for it is kept or given",
            transportError: error.transportError, underlying: error)
        refused.presentedFingerprint = try? await transport.presentedPublicKey(at: url)
        return refused
    }

    /// Lists the posts shared with the follower, or with `reference` downloads one.
    static func read(_ reference: String?, from url: URL, reader: FollowedStationReader, namespace: String,
                     handle: FollowedStationHandle?, context: CommandContext) async throws {
        if let reference {
            try await get(reference, from: url, reader: reader, namespace: namespace, context: context)
            return
        }
        let identity = reader.identity
        let listing = try await reader.listPosts(of: .endpoint(url), namespace: namespace, as: JSONValue.self)
        var output = Output(station: url.absoluteString, followerUID: identity.uid, posts: listing.posts.map(FileRow.init),
                            skipped: listing.skipped.map { SkippedRow(postCID: $0.postCID, error: $0.error.description) })
        if listing.isOffline { context.console.note("station unreachable: showing the last listing read online") }
        if output.posts.isEmpty {
            // Empty because nothing is shared yet, or because the follow is not approved: say which.
            var said = "nothing shared with \(identity.uid) yet"
            if var handle, let standing = try? await reader.followStatus(of: handle) {
                output.followStatus = standing.status.description
                if standing.status != .approved { said += " (\(standing.status.explanation))" }
                handle.record(standing)
                try context.home.keepFollowed(handle)
            }
            context.console.say("\(said)")
        }
        for row in output.posts { context.console.say(row.line) }
        context.console.emit(output)
    }

    /// `--get`: finds the post by CID or exact filename and downloads it (to a file with progress, or standard output).
    static func get(_ reference: String, from url: URL, reader: FollowedStationReader, namespace: String,
                    context: CommandContext) async throws {
        let listing = try await reader.listPosts(of: .endpoint(url), namespace: namespace, as: DriveFileMetadata.self)
        let item = try DriveFiles.find(reference, in: listing.posts)
        var saved = try await DriveFiles.save(item, context: context) {
            try await reader.download(item)
        } toFile: { destination, progress in
            try await reader.download(item, to: destination, progress: progress)
        }
        saved.station = url.absoluteString
        context.console.emit(saved)
    }
}
