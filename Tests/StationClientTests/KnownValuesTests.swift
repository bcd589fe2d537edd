import ClassicalCrypto
import Envelope
import Foundation
import LoopbackHTTP
import Manifest
import PQCrypto
import Signing
@testable import StationClient
import StationEmulator
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

    @Test("FollowStatus, TransportError.Kind: knownValues is every static member")
    func everyStaticMember() throws {
        try Self.expect(FollowStatus.knownValues, are: "FollowStatus", in: "StationClient")
        try Self.expect(TransportError.Kind.knownValues, are: "TransportError.Kind", in: "Transport")
        // Each known value is its static member (same name, same value).
        #expect(StationClientError.Kind.knownValues.contains(.tooSlow))
        #expect(PairingFailure.Kind.knownValues.contains(.cancelledByUser))
        #expect(TransportError.Kind.knownValues.contains(.responseTooLarge(limit: 5)))
    }

    /// The names of the `ErrorKind<failure>` static members the surface file of `module` records.
    static func errorKindMembers(of failure: String, in module: String) throws -> Set<String> {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PublicSurface/\(module).txt")
        var names = Set<String>()
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            guard line.hasPrefix("type.property "), line.hasSuffix(": ErrorKind<\(failure)> { get }"),
                  let range = line.range(of: ": static var ") else { continue }
            let rest = line[range.upperBound...]
            names.insert(String(rest[..<(rest.firstIndex(of: ":") ?? rest.endIndex)]))
        }
        return names
    }

    /// Expects `known` to be the surface's `ErrorKind<failure>` members, each once.
    static func expectErrorKinds<Kind: Hashable & CustomStringConvertible>(
        _ known: [Kind], of failure: String, in module: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let members = try errorKindMembers(of: failure, in: module)
        #expect(!members.isEmpty, "\(failure)", sourceLocation: sourceLocation)
        #expect(Set(known.map(\.description)) == members, "\(failure)", sourceLocation: sourceLocation)
        #expect(Set(known).count == known.count, sourceLocation: sourceLocation)
    }

    @Test("Every ErrorKind<Failure> of the package: knownValues is every static member")
    func everyErrorKind() throws {
        try Self.expectErrorKinds(StationClientError.Kind.knownValues, of: "StationClientError", in: "StationClient")
        try Self.expectErrorKinds(PairingFailure.Kind.knownValues, of: "PairingFailure", in: "StationClient")
        try Self.expectErrorKinds(PQCryptoError.Kind.knownValues, of: "PQCryptoError", in: "PQCrypto")
        try Self.expectErrorKinds(PQCrypto.ErrorKind<HexDecodingError>.knownValues, of: "HexDecodingError", in: "PQCrypto")
        try Self.expectErrorKinds(ClassicalCryptoError.Kind.knownValues, of: "ClassicalCryptoError", in: "ClassicalCrypto")
        try Self.expectErrorKinds(SigningError.Kind.knownValues, of: "SigningError", in: "Signing")
        try Self.expectErrorKinds(EnvelopeError.Kind.knownValues, of: "EnvelopeError", in: "Envelope")
        try Self.expectErrorKinds(StationEmulatorError.Kind.knownValues, of: "StationEmulatorError", in: "StationEmulator")
        try Self.expectErrorKinds(Transport.ErrorKind<ServerSocketError>.knownValues, of: "ServerSocketError", in: "LoopbackHTTP")
        try Self.expectErrorKinds(Transport.ErrorKind<HTTPBodyStreamError>.knownValues, of: "HTTPBodyStreamError", in: "Transport")
        try Self.expectErrorKinds(Transport.ErrorKind<MultipartForm.Error>.knownValues, of: "MultipartForm.Error", in: "Transport")
        try Self.expectErrorKinds(Transport.ErrorKind<PublicKeyFingerprint.ParseError>.knownValues,
                                  of: "PublicKeyFingerprint.ParseError", in: "Transport")
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

    @Test("What a listing reports for each audience published to is that audience, uids and all")
    func listingReportsTheMode() async throws {
        let stations = try await FollowingTests.TwoStations()
        let handle = try await stations.atBob.follow(stationAt: stations.aliceURL)
        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        let client = stations.atAlice
        let audiences: [Audience] = [.selfOnly, .allFollowers, .specific([handle.followerUID])]
        var published: [String: Audience] = [:]
        for (index, audience) in audiences.enumerated() {
            published[try await client.publish(data: Data("\(index)".utf8), metadata: Fixture.drive("\(index)", size: 1),
                                               audience: audience).postCID] = audience
        }
        for post in try await client.listPosts(as: DriveFileMetadata.self).posts {
            let audience = try #require(published[post.postCID])
            #expect(post.audienceMode == audience.mode)
            #expect(post.audience == audience)
            #expect(post.audienceUIDs == audience.uids)
        }
    }
}
