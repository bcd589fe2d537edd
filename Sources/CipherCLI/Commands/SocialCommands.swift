import CurlTransport
import Foundation
import Manifest
import StationClient
import Transport

/// `cipher followers [pending|approve UID|remove UID]`.
enum FollowersCommand: Command {
    static let spec = CommandSpec(
        name: "followers", usage: "followers [pending|approve UID|remove UID]",
        summary: "list approved followers, pending requests, or approve/remove one", positionals: 0...2)

    struct Row: Encodable {
        var uid: String
        var deviceUID: String?
        var alias: String?
        var endpoint: String?
        enum CodingKeys: String, CodingKey { case uid, deviceUID = "device_uid", alias, endpoint }
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
            if rows.isEmpty { console.say("no followers") }
            for row in rows { console.say("\(row.uid)  \(row.alias ?? "")  \(row.endpoint ?? "")") }
            console.emit(ListOutput(followers: rows))
        case ("pending", 1):
            let client = try await context.client()
            let rows = try await client.pendingFollowers().map {
                Row(uid: $0.uid, deviceUID: $0.deviceUID, alias: $0.alias, endpoint: $0.endpoint)
            }
            if rows.isEmpty { console.say("no pending follow requests") }
            for row in rows { console.say("\(row.uid)  device \(row.deviceUID ?? "-")  \(row.alias ?? "")") }
            console.emit(ListOutput(pending: rows))
        case ("approve", 2), ("remove", 2):
            let client = try await context.client()
            let uid = positionals[1]
            let response = positionals[0] == "approve"
                ? try await client.approveFollower(uid: uid) : try await client.removeFollower(uid: uid)
            console.say("\(response.action): \(response.uid)")
            console.emit(ChangeOutput(action: response.action, uid: response.uid))
        default:
            throw CLIError.usage("usage: cipher \(spec.usage)")
        }
    }
}

/// `cipher follow URL`.
enum FollowCommand: Command {
    static let spec = CommandSpec(
        name: "follow", usage: "follow URL",
        summary: "ask the station at URL to let you follow it and record the follow on your station", positionals: 1...1)

    struct Output: Encodable {
        var uid: String
        var endpoint: String
        var followerUID: String
        var request: String
        enum CodingKeys: String, CodingKey { case uid, endpoint, followerUID = "follower_uid", request }
    }

    static func run(_ context: CommandContext) async throws {
        guard let url = URL(string: context.arguments.positionals[0]), url.host != nil else {
            throw CLIError.usage("\(context.arguments.positionals[0]) is not a URL")
        }
        let client = try await context.client()
        let transport = client.configuration.transport
        let profile = try await StationClient.profile(at: url, transport: transport)
        let identity = try await FollowerIdentityStore.identity(for: client, context: context)
        let ours = try await client.profile()
        // Their station seals our envelopes to this identity's key; the owner approves it there.
        let result = try await identity.sendFollowRequest(to: url, transport: transport, ipnsID: ours.ipnsName ?? ours.ipfsPeerID)
        _ = try await client.follow(FollowTarget(uid: profile.uid, mlkemPublicKey: profile.mlkemPublicKey,
                                                 mldsaPublicKey: profile.mldsaPublicKey, endpoint: url.absoluteString,
                                                 ipnsID: profile.ipnsName ?? profile.ipfsPeerID))
        let output = Output(uid: profile.uid, endpoint: url.absoluteString, followerUID: identity.uid, request: result.status ?? "sent")
        context.console.say("following \(profile.uid) at \(url.absoluteString); your follow request (as \(identity.uid)) waits for its owner's approval")
        context.console.emit(output)
    }
}

/// `cipher unfollow UID`.
enum UnfollowCommand: Command {
    static let spec = CommandSpec(name: "unfollow", usage: "unfollow UID", summary: "stop following a station", positionals: 1...1)

    struct Output: Encodable {
        var uid: String
        var action: String
    }

    static func run(_ context: CommandContext) async throws {
        let client = try await context.client()
        let response = try await client.unfollow(uid: context.arguments.positionals[0])
        context.console.say("unfollowed \(context.arguments.positionals[0])")
        context.console.emit(Output(uid: context.arguments.positionals[0], action: response.action))
    }
}

/// `cipher read URL`.
enum ReadCommand: Command {
    static let spec = CommandSpec(
        name: "read", usage: "read URL [--gateway URL] [--namespace drive]",
        summary: "list the posts a followed station shares with you",
        options: [
            OptionSpec(names: ["--gateway"], help: "the IPFS gateway to read it through (default: the one given at pairing)", value: "URL"),
            OptionSpec(names: ["--namespace"], help: "the namespace to read (default: drive)", value: "NAME"),
        ],
        positionals: 1...1)

    struct Output: Encodable {
        var station: String
        var followerUID: String
        var posts: [FileRow]
        var skipped: [SkippedRow]
        enum CodingKeys: String, CodingKey { case station, followerUID = "follower_uid", posts, skipped }
    }

    static func run(_ context: CommandContext) async throws {
        guard let url = URL(string: context.arguments.positionals[0]), url.host != nil else {
            throw CLIError.usage("\(context.arguments.positionals[0]) is not a URL")
        }
        let client = try await context.client()
        let transport = client.configuration.transport
        let gateway: IPFSGateway
        if let given = context.arguments.value("--gateway") {
            guard let gatewayURL = URL(string: given), gatewayURL.host != nil else { throw CLIError.usage("\(given) is not a URL") }
            gateway = IPFSGateway(baseURL: gatewayURL, transport: transport)
        } else if let configured = client.configuration.gateway {
            gateway = configured
        } else {
            throw CLIError.usage("reading another station needs an IPFS gateway: --gateway URL (or pair with --gateway)")
        }
        guard let identity = try await FollowerIdentity.load(from: client.configuration.keyStore) else {
            throw CLIError.failure("no follower identity yet: run `cipher follow \(url.absoluteString)` first")
        }
        let reader = FollowedStationReader(identity: identity, gateway: gateway, transport: transport)
        let listing = try await reader.listPosts(of: .endpoint(url), namespace: context.arguments.value("--namespace") ?? DriveFiles.namespace,
                                                 as: JSONValue.self)
        let output = Output(station: url.absoluteString, followerUID: identity.uid, posts: listing.posts.map(FileRow.init),
                            skipped: listing.skipped.map { SkippedRow(postCID: $0.postCID, error: $0.error.description) })
        if output.posts.isEmpty { context.console.say("nothing shared with \(identity.uid) yet") }
        for row in output.posts { context.console.say(row.line) }
        context.console.emit(output)
    }
}

/// The follower identity this device follows other stations with (created on first use).
enum FollowerIdentityStore {
    static func identity(for client: StationClient, context: CommandContext) async throws -> FollowerIdentity {
        let store = client.configuration.keyStore
        if let existing = try await FollowerIdentity.load(from: store) { return existing }
        let settings = try context.home.loadSettings()
        let identity = FollowerIdentity.generate(name: settings.deviceName ?? "cipher")
        try await identity.save(to: store)
        return identity
    }
}
