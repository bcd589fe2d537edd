import Foundation
import Manifest
import Transport
import OrderedJSON
import ContentAddressing

/// Changes to the station's public profile (`POST /profile/update`).
///
/// A field left `nil` is not sent, so the station leaves it unchanged; an empty string clears it
/// (the station trims every value, and one that trims to nothing is stored as `null`).
public struct ProfileChanges: Sendable, Hashable {
    /// `display_name` (at most 80 characters).
    public var displayName: String?
    /// `username`.
    public var username: String?
    /// `bio`.
    public var bio: String?
    /// `link`.
    public var link: String?

    /// Creates a set of changes; omitted fields stay as they are.
    public init(displayName: String? = nil, username: String? = nil, bio: String? = nil, link: String? = nil) {
        self.displayName = displayName
        self.username = username
        self.bio = bio
        self.link = link
    }

    /// The request body: only the fields that are set, in the station's order.
    var body: JSONObject {
        var object = JSONObject()
        for (key, value) in [("display_name", displayName), ("username", username), ("bio", bio), ("link", link)] {
            if let value { object[key] = .string(value) }
        }
        return object
    }
}

/// The account-wide privacy a namespace is flipped to (`POST /privacy/flip`).
public enum AccountPrivacy: String, Sendable, Hashable, CaseIterable {
    /// Every post becomes plaintext and world-readable.
    case `public`
    /// Every public post is encrypted again, to the audience given.
    case `private`
}

extension StationClient {
    /// `GET /storage`: the station's IPFS repository, disk, and per-namespace usage.
    ///
    /// The station answers without authentication; each section carries either its figures or
    /// the error of its probe.
    ///
    /// - Throws: ``StationClientError``: `.unreachable`, `.station` for a non-2xx answer,
    ///   `.invalidResponse` when the answer is not a storage report.
    public func storage() async throws -> StorageResponse {
        let operation = "GET /storage"
        let response = try await connection.send(
            .unsigned(.get, "/storage", limit: ResponseLimit.small, timeouts: configuration.requestTimeouts, operation: operation))
        return try StationConnection.decodeAnswer(StorageResponse.self, from: response, operation: operation)
    }

    /// `POST /profile/update`: changes the station's public profile and returns it as stored.
    ///
    /// - Parameter changes: the fields to set or clear; the others stay unchanged.
    /// - Throws: ``StationClientError`` `.station` with status 400 and the station's text when a
    ///   value is refused (for example a display name over 80 characters).
    public func updateProfile(_ changes: ProfileChanges) async throws -> ClientProfile {
        try await sendSignedAndDecode(.post, "/profile/update", body: .json(WireJSON.serialize(.object(changes.body))),
                                      as: ProfileUpdateResponse.self, limit: ResponseLimit.profile, operation: "POST /profile/update").profile
    }

    /// `POST /profile/avatar`: stores `image` as the station's avatar and returns its CID.
    ///
    /// - Important: The avatar is a **public, plaintext** IPFS block: anyone who learns the CID
    ///   can fetch it, and it cannot be deleted from copies others made.
    /// - Parameters:
    ///   - image: the image bytes (within the station's upload limit).
    ///   - contentType: the image's media type, for example `image/png`.
    /// - Throws: ``StationClientError`` `.refused` when the form cannot be built, `.station` for a
    ///   refusal.
    public func updateAvatar(_ image: Data, contentType: String = "image/png") async throws -> String {
        let operation = "POST /profile/avatar"
        var form = MultipartForm()
        do {
            try form.addFile("file", filename: "avatar", contentType: contentType, data: image)
        } catch {
            throw StationClientError(.refused, operation: operation, message: "\(error)", underlying: error)
        }
        let digest = try Publisher.digest(of: form, operation: operation)
        return try await sendSignedAndDecode(.post, "/profile/avatar", body: .multipart(form, sha256: digest),
                                             as: AvatarUpdateResponse.self, operation: operation).avatarCID
    }

    /// `POST /privacy/flip`: migrates every post of a namespace between public and encrypted,
    /// and sets the profile's `account_privacy` and default audience.
    ///
    /// - Important: Flipping to ``AccountPrivacy/public`` publishes every post's bytes and
    ///   metadata as plaintext, permanently: copies others fetch cannot be recalled.
    /// - Parameters:
    ///   - privacy: the new privacy.
    ///   - audience: who may read the posts after a flip to ``AccountPrivacy/private``
    ///     (ignored for a flip to public).
    ///   - namespace: the namespace to migrate (the configured one when `nil`).
    /// - Throws: ``StationClientError`` `.station` for a refusal.
    public func flipPrivacy(
        to privacy: AccountPrivacy, audience: Audience = .allFollowers, namespace: String? = nil
    ) async throws -> PrivacyFlipResponse {
        var object: JSONObject = ["mode": .string(privacy.rawValue)]
        if privacy == .private {
            object["audience_mode"] = .string(audience.wireValue)
            if case .specific(let uids) = audience { object["audience_uids"] = .array(uids.map(JSONValue.string)) }
        }
        object["client"] = .string(try self.namespace(namespace))
        return try await sendSignedAndDecode(.post, "/privacy/flip", body: .json(WireJSON.serialize(.object(object))),
                                             as: PrivacyFlipResponse.self, operation: "POST /privacy/flip")
    }
}
