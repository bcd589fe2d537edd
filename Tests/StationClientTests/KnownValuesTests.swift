import Foundation
import Manifest
@testable import StationClient
import Testing
import Transport

@Suite("Each growable kind type lists the values known to this version")
struct KnownValuesTests {
    /// The names of `type`'s `static let` members of its own type, as the public surface file of
    /// `module` records them (`type.property T.x: static let x: T`).
    static func surfaceMembers(of type: String, in module: String) throws -> Set<String> {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PublicSurface/\(module).txt")
        let prefix = "type.property \(type)."
        var names = Set<String>()
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") where line.hasPrefix(prefix) {
            let rest = line.dropFirst(prefix.count)
            guard let colon = rest.firstIndex(of: ":") else { continue }
            let name = String(rest[..<colon])
            if rest.hasSuffix("static let \(name): \(type)") { names.insert(name) }
        }
        return names
    }

    /// Expects `known` to hold distinct values, named as the surface file's static members of `type`.
    static func expect<Value: Hashable & CustomStringConvertible>(
        _ known: [Value], are type: String, in module: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let members = try surfaceMembers(of: type, in: module)
        #expect(!members.isEmpty, sourceLocation: sourceLocation)
        #expect(Set(known.map(\.description)) == members, sourceLocation: sourceLocation)
        #expect(Set(known).count == known.count, sourceLocation: sourceLocation)
    }

    @Test("StationClientError.Kind, PairingFailure.Kind, FollowStatus, TransportError.Kind: knownValues is every static member")
    func everyStaticMember() throws {
        try Self.expect(StationClientError.Kind.knownValues, are: "StationClientError.Kind", in: "StationClient")
        try Self.expect(PairingFailure.Kind.knownValues, are: "PairingFailure.Kind", in: "StationClient")
        try Self.expect(FollowStatus.knownValues, are: "FollowStatus", in: "StationClient")
        try Self.expect(TransportError.Kind.knownValues, are: "TransportError.Kind", in: "Transport")
        // Each known value is its static member (same name, same value).
        #expect(StationClientError.Kind.knownValues.contains(.tooSlow))
        #expect(PairingFailure.Kind.knownValues.contains(.cancelledByUser))
        #expect(TransportError.Kind.knownValues.contains(.responseTooLarge(limit: 5)))
    }
}

@Suite("Publishing's Audience and a listing's AudienceMode convert both ways without loss")
struct AudienceVocabularyTests {
    @Test("Audience → mode → Audience is the same audience; each encrypted mode → Audience → mode is the same mode")
    func roundTrips() async throws {
        let audiences: [Audience] = [.selfOnly, .specific(["bob-1", "carol-2"]), .specific([]), .allFollowers]
        for audience in audiences {
            #expect(Audience(mode: audience.mode, uids: audience.uids) == audience)
        }
        #expect(Audience.allFollowers.mode == .all)
        #expect(Audience.specific(["bob-1"]).uids == ["bob-1"] && Audience.allFollowers.uids == nil)
        for mode in [AudienceMode.selfOnly, .specific, .all] {
            #expect(Audience(mode: mode)?.mode == mode)
        }
        #expect(Audience(mode: .public) == nil)
        #expect(Audience(mode: .unknown("friends")) == nil)
        #expect(Audience(mode: AudienceMode(wireValue: "all_followers")) == .allFollowers)
    }

    @Test("What a listing reports for each audience published to is that audience's mode")
    func listingReportsTheMode() async throws {
        let (_, client) = try await StationRig.pairedInProcess()
        let audiences: [Audience] = [.selfOnly, .allFollowers]
        var published: [String: Audience] = [:]
        for (index, audience) in audiences.enumerated() {
            published[try await client.publish(data: Data("\(index)".utf8), metadata: Fixture.drive("\(index)", size: 1),
                                               audience: audience).postCID] = audience
        }
        for post in try await client.listPosts(as: DriveFileMetadata.self).posts {
            let audience = try #require(published[post.postCID])
            #expect(post.audienceMode == audience.mode)
            #expect(Audience(mode: post.audienceMode) == audience)
        }
    }
}
