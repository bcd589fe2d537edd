import Foundation
import ContentAddressing
import Manifest

/// The station's IPNS key as the trust anchor of endpoint moves: named by a profile or the
/// credentials as an IPNS name, a peer id, or both.
enum IPNSAnchor {
    /// The Ed25519 peer id both forms name (they must agree).
    static func peerID(ipnsName: String?, peerID: String?, operation: String, source: String) throws -> PeerID {
        func parse(_ text: String) throws -> PeerID {
            guard let id = try? PeerID(text), id.ed25519PublicKey != nil else {
                throw StationClientError(.integrity, operation: operation,
                                         message: "\(source) names \(text.debugDescription), not an Ed25519 IPNS key")
            }
            return id
        }
        let fromName = try ipnsName.map(parse)
        let fromPeer = try peerID.map(parse)
        if let fromName, let fromPeer, fromName != fromPeer {
            throw StationClientError(.integrity, operation: operation, message: "\(source) names two different IPNS keys")
        }
        guard let id = fromName ?? fromPeer else {
            throw StationClientError(.integrity, operation: operation, message: "\(source) names no IPNS key")
        }
        return id
    }

    /// Refuses a profile that names another station, or other keys than `credentials` hold: its
    /// uid, its ML-KEM key, its ML-DSA key and its IPNS key, each where both name one.
    static func check(_ profile: StationProfile, against credentials: DeviceCredentials, operation: String) throws {
        guard profile.uid == credentials.stationUID else {
            throw StationClientError(.integrity, operation: operation, message: "the station reports another uid")
        }
        if let key = profile.mlkemPublicKey, key.lowercased() != credentials.stationKEMPublicKeyHex.lowercased() {
            throw StationClientError(.integrity, operation: operation, message: "the station reports another ML-KEM key; not adopted")
        }
        if let key = profile.mldsaPublicKey, let stored = credentials.stationMLDSAPublicKeyHex, stored.lowercased() != key.lowercased() {
            throw StationClientError(.integrity, operation: operation, message: "the station reports another ML-DSA key; not adopted")
        }
        guard profile.ipnsName != nil || profile.ipfsPeerID != nil,
              credentials.ipnsName != nil || credentials.ipfsPeerID != nil else { return }
        let presented = try peerID(ipnsName: profile.ipnsName, peerID: profile.ipfsPeerID, operation: operation,
                                   source: "the station's profile")
        let stored = try peerID(ipnsName: credentials.ipnsName, peerID: credentials.ipfsPeerID, operation: operation,
                                source: "the stored credentials")
        guard stored == presented else {
            throw StationClientError(
                .integrity, operation: operation,
                message: "the station names another IPNS key (\(presented.ipnsName)) than the key fixed after pairing (\(stored.ipnsName)); not adopted")
        }
    }
}

extension StationConnection {
    /// Checks `profile` against the stored identity (see ``IPNSAnchor/check(_:against:operation:)``),
    /// changing nothing; a mismatch is logged.
    func check(_ profile: StationProfile, operation: String) throws {
        do {
            try IPNSAnchor.check(profile, against: credentials, operation: operation)
        } catch let error as StationClientError {
            configuration.log(.error, "\(operation): \(error.message)")
            throw error
        }
    }

    /// Checks `profile` and fixes in the credentials what it names for the first time: the
    /// station's ML-DSA key and its IPNS key (saved to the key store when either is new).
    ///
    /// - Returns: the IPNS name the credentials hold now, `nil` when neither names one.
    /// - Throws: ``StationClientError``: `.integrity` when the profile names another station or
    ///   other keys; `.refused` when it names an IPNS key for the first time over plain `http`
    ///   (anyone on the path could name their own key, and later move the client with records
    ///   they sign), after keeping a new ML-DSA key.
    func adoptAnchor(from profile: StationProfile, operation: String) async throws -> String? {
        var refusedOverHTTP = false
        try await updateCredentials { credentials in
            try IPNSAnchor.check(profile, against: credentials, operation: operation)
            var changed = false
            if let key = profile.mldsaPublicKey, credentials.stationMLDSAPublicKeyHex == nil {
                credentials.stationMLDSAPublicKeyHex = key.lowercased()
                changed = true
            }
            guard profile.ipnsName != nil || profile.ipfsPeerID != nil else { return changed }
            if credentials.ipnsName == nil, credentials.ipfsPeerID == nil, credentials.endpoint.scheme?.lowercased() != "https" {
                refusedOverHTTP = true
                return changed
            }
            let presented = try IPNSAnchor.peerID(ipnsName: profile.ipnsName, peerID: profile.ipfsPeerID, operation: operation,
                                                  source: "the station's profile")
            let name = presented.ipnsName, peer = presented.description
            if credentials.ipnsName != name { credentials.ipnsName = name; changed = true }
            if credentials.ipfsPeerID != peer { credentials.ipfsPeerID = peer; changed = true }
            return changed
        }
        if refusedOverHTTP {
            configuration.log(.warning, "\(operation): the station names an IPNS key only now, over plain http; not adopted")
            throw StationClientError(.refused, operation: operation,
                                     message: "the station names an IPNS key only now, over plain http; not adopted")
        }
        return credentials.ipnsName
    }
}
