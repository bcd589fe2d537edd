import Foundation
import Manifest
import OrderedJSON

/// Where a follower stands with a station it follows, as far as the station's published state
/// says: see ``StationClient/followStatus(of:)``.
///
/// A struct with static members rather than an enum, so a later release can add a status
/// without breaking an app's `switch`: match with `case .approved:` and end with `default:`.
/// Statuses compare equal when they are the same status; ``description`` is its name
/// (`"approved"`) and ``explanation`` says it in words.
public struct FollowStatus: Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, Hashable, CaseIterable {
        case approved, awaitingApproval, nothingKnown, removed
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    /// The status's name, as written after the dot (`"awaitingApproval"`).
    public var description: String { code.rawValue }

    /// The station's published social graph holds a decoder envelope for this follower: its
    /// owner approved the follow, and posts shared with all followers are readable.
    public static let approved = FollowStatus(.approved)
    /// A follow request was sent (the handle records it: ``FollowedStationHandle/requestWasSent``)
    /// and no approval has been seen: whether the station has published no social graph yet (a
    /// station builds its graph when its owner first approves a follower or follows a station)
    /// or has published one without this follower. Its owner has not approved the request yet,
    /// or rejected it (the station publishes nothing that tells the two apart).
    public static let awaitingApproval = FollowStatus(.awaitingApproval)
    /// Nothing is known: the handle records no follow request (one built by hand, or saved
    /// without its ``FollowedStationHandle/requestStatus``) and the station's published state
    /// does not approve this follower, or the station has published nothing to tell from (no
    /// IPNS name, no IPNS record, no social graph).
    public static let nothingKnown = FollowStatus(.nothingKnown)
    /// This follower was seen approved (``FollowedStationHandle/wasApproved``) and the
    /// station's graph no longer holds it: its owner removed it. Posts it could read before stay
    /// readable where their envelopes were not rewrapped; new ones are not shared with it.
    public static let removed = FollowStatus(.removed)

    /// The former name of ``awaitingApproval`` (the same value).
    @available(*, deprecated, renamed: "awaitingApproval")
    public static var pending: FollowStatus { awaitingApproval }
    /// The former name of ``nothingKnown`` (the same value). A request sent to a station that
    /// has published no graph yet now reads ``awaitingApproval``, no longer this.
    @available(*, deprecated, renamed: "nothingKnown")
    public static var notPublished: FollowStatus { nothingKnown }

    /// Every status known to this version of the SDK, for an app's tests (that each has a
    /// message, say). A later version may add statuses: an app's `switch` still ends with
    /// `default:`.
    public static var knownValues: [FollowStatus] { Code.allCases.map(FollowStatus.init) }

    /// The status in a sentence, for people (`"approved: posts shared with followers are readable"`).
    public var explanation: String {
        switch code {
        case .approved: "approved: posts shared with followers are readable"
        case .awaitingApproval: "awaiting approval: a follow request was sent and the station's owner has not approved it"
        case .nothingKnown: "nothing known: no follow request is recorded and the station has not approved this follower"
        case .removed: "removed: the station's owner removed this follower"
        }
    }
}

/// A follower's standing with a followed station: its ``status`` and what the station's
/// published state that told it was (``ipnsID``, ``recordSequence``), to keep in the handle with
/// ``FollowedStationHandle/record(_:)``.
///
/// A standing is either **refreshed** (``isRefreshed``: read from the station's current IPNS
/// record) or **kept** (``refreshFailure`` is set): the gateway could not serve the record of a
/// station the handle had already verified one of, and ``status`` is the last standing the
/// handle vouches for, not a new reading. Show a kept standing as such ("approved, not
/// confirmed just now") and read again later.
public struct FollowStanding: Sendable, Hashable {
    /// Where the follower stands.
    public var status: FollowStatus
    /// The station's IPNS name read (learned from its `/profile` when the handle had none), or
    /// `nil` when it has none yet.
    public var ipnsID: String?
    /// The sequence of the verified IPNS record read, or `nil` when there was none (always `nil`
    /// when the standing was kept: see ``refreshFailure``).
    public var recordSequence: UInt64?
    /// Why the standing could not be refreshed, or `nil` when ``status`` was read from the
    /// station's current record.
    ///
    /// Set (a ``StationClientError`` of kind `.gateway`, its ``StationClientError/status`` the
    /// gateway's 404 or 410) when the gateway could not serve the IPNS record of a station whose
    /// record the handle had already verified (``FollowedStationHandle/ipnsSequence``) or that
    /// had approved this follower (``FollowedStationHandle/wasApproved``). Such a station did
    /// publish: the missing record says nothing about the follower, so ``status`` keeps the last
    /// verified standing: ``FollowStatus/approved`` when the handle saw an approval,
    /// ``FollowStatus/awaitingApproval`` when it records a request, ``FollowStatus/nothingKnown``
    /// otherwise.
    public var refreshFailure: StationClientError? {
        get { failure?.error }
        set { failure = newValue.map(RefreshFailure.init) }
    }

    /// Whether ``status`` was read from the station's current record (``refreshFailure`` is `nil`).
    public var isRefreshed: Bool { failure == nil }

    /// ``refreshFailure``, stored so that standings stay `Hashable` (compared by kind, status and message).
    private var failure: RefreshFailure?

    /// Creates a standing.
    public init(status: FollowStatus, ipnsID: String? = nil, recordSequence: UInt64? = nil,
                refreshFailure: StationClientError? = nil) {
        self.status = status
        self.ipnsID = ipnsID
        self.recordSequence = recordSequence
        self.failure = refreshFailure.map(RefreshFailure.init)
    }

    private struct RefreshFailure: Sendable, Hashable {
        let error: StationClientError

        static func == (lhs: RefreshFailure, rhs: RefreshFailure) -> Bool {
            lhs.error.kind == rhs.error.kind && lhs.error.status == rhs.error.status && lhs.error.message == rhs.error.message
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(error.kind)
            hasher.combine(error.status)
            hasher.combine(error.message)
        }
    }
}

extension FollowedStationHandle {
    /// Keeps what `standing` learned: an approval (``wasApproved``, which later tells
    /// ``FollowStatus/removed`` from ``FollowStatus/awaitingApproval``), the station's IPNS name when the
    /// handle had none, and the record's sequence as the rollback floor (``ipnsSequence``).
    ///
    /// A kept standing (``FollowStanding/refreshFailure`` set) teaches nothing new and leaves the
    /// handle as it was.
    public mutating func record(_ standing: FollowStanding) {
        guard standing.isRefreshed else { return }
        if standing.status == .approved { wasApproved = true }
        if ipnsID == nil { ipnsID = standing.ipnsID }
        if let sequence = standing.recordSequence, standing.ipnsID == ipnsID { ipnsSequence = max(ipnsSequence ?? 0, sequence) }
    }
}

extension FollowedStationReader {
    /// Where this follower stands with `station`, from what the station publishes: its IPNS
    /// record (through the gateway, verified, not older than one already seen) and the
    /// `public.json` it points to. The decoder-envelopes document of its social graph
    /// (`follow_decoder_envelopes_cid`, in the clear) names every approved follower; this
    /// follower in it is ``FollowStatus/approved``. Not in it, the follower is
    /// ``FollowStatus/removed`` when `station` was seen approved before
    /// (``FollowedStationHandle/wasApproved``). Otherwise — not in the graph, or no IPNS name, no
    /// record (the gateway answers 404) or no graph yet — it is ``FollowStatus/awaitingApproval``
    /// when the handle records a follow request (``FollowedStationHandle/requestWasSent``, as
    /// every handle ``StationClient/follow(stationAt:trust:name:)`` returns does), and
    /// ``FollowStatus/nothingKnown`` when it records none.
    ///
    /// A 404 (or 410) for the record of a station the handle had already verified a record of
    /// (``FollowedStationHandle/ipnsSequence``) or seen approve this follower
    /// (``FollowedStationHandle/wasApproved``) is not "not published": that station published, and
    /// the gateway cannot serve its record just now. The standing is then the last one the handle
    /// verified — ``FollowStatus/approved`` after an approval, otherwise
    /// ``FollowStatus/awaitingApproval`` (or ``FollowStatus/nothingKnown`` without a recorded
    /// request) — with ``FollowStanding/refreshFailure`` set to the gateway's error
    /// (``FollowStanding/isRefreshed`` is `false`).
    ///
    /// When the handle has no IPNS name, the station's `/profile` is asked for one (with the
    /// reader's pins).
    ///
    /// What cannot be known: the status is the station's **last published** state. The station
    /// rebuilds and republishes its graph when its owner approves a follower or removes an
    /// approved one, but publishes to IPNS in the background: until that record reaches the
    /// gateway, the older status shows. A request rejected before approval and one never
    /// received both read ``FollowStatus/awaitingApproval`` (the station publishes nothing for either).
    ///
    /// - Throws: ``StationClientError``: `.gateway` when the gateway fails or cannot be reached
    ///   (other than a 404 for the record), `.integrity` for a record that does not verify, an
    ///   older record than one already seen, or a `public.json` of another station, and as
    ///   ``StationClient/profile()`` when the profile is needed and cannot be read.
    public func followStatus(of station: FollowedStationHandle) async throws -> FollowStanding {
        let operation = "reading the follow status at \(station.endpoint.absoluteString)"
        var name = station.ipnsID
        if name == nil {
            let profile = try await StationConnection.read(.profile, at: StationOrigin(url: station.endpoint, pins: pins),
                                                           transport: transport)
            guard profile.uid == station.uid else {
                throw StationClientError(.integrity, operation: operation,
                                         message: "the station there is \(profile.uid), not the followed \(station.uid)")
            }
            name = profile.ipnsName ?? profile.ipfsPeerID
        }
        let unapproved: FollowStatus = station.requestWasSent ? .awaitingApproval : .nothingKnown
        guard let name else { return FollowStanding(status: unapproved) }
        let resolved: ResolvedIPNSName
        do {
            resolved = try await resolvedDocument(ipnsName: name)
        } catch let error as StationClientError where error.kind == .gateway && (error.status == 404 || error.status == 410) {
            // A station this handle verified a record of (or saw approve it) has published: the
            // gateway's missing record says nothing about the follower. Keep what was verified.
            guard station.wasApproved || station.ipnsSequence != nil else { return FollowStanding(status: unapproved, ipnsID: name) }
            return FollowStanding(status: station.wasApproved ? .approved : unapproved, ipnsID: name, refreshFailure: error)
        }
        guard resolved.document.uid == station.uid else {
            throw StationClientError(.integrity, operation: operation,
                                     message: "/ipns/\(name) is the public.json of \(resolved.document.uid), not of \(station.uid)")
        }
        var standing = FollowStanding(status: unapproved, ipnsID: name, recordSequence: resolved.sequence)
        guard resolved.document.followDecoderEnvelopesCID != nil else { return standing }
        if try await decoderEnvelopes(of: resolved.document) != nil {
            standing.status = .approved
        } else {
            standing.status = station.wasApproved ? .removed : unapproved
        }
        return standing
    }

    /// This follower's decoder envelopes in the station's social graph
    /// (`follow_decoder_envelopes_cid`, one per device), or `nil` when the graph has none for it
    /// or there is no graph.
    func decoderEnvelopes(of document: PublicDocument) async throws -> [JSONValue]? {
        guard let decodersCID = document.followDecoderEnvelopesCID else { return nil }
        let decoders = try WireJSON.parse(try await gateway.fetch(cid: decodersCID, limit: ResponseLimit.envelopeSet))
        guard let mine = decoders["envelopes"]?[identity.uid]?.arrayValue, !mine.isEmpty else { return nil }
        return mine
    }

    /// The `public.json` the IPNS name points to, verified and checked against the rollback floor.
    func resolvedDocument(ipnsName name: String) async throws -> ResolvedIPNSName {
        let resolved = try await gateway.resolveVerified(ipnsName: name)
        try ipnsFloors.admit(resolved.sequence, for: name, operation: "resolving /ipns/\(name)")
        return resolved
    }
}

extension FollowedStationFeed {
    /// Where this follower stands with the station: see
    /// ``FollowedStationReader/followStatus(of:)``.
    ///
    /// - Throws: as ``FollowedStationReader/followStatus(of:)``.
    public func status() async throws -> FollowStanding {
        try await reader.followStatus(of: station)
    }
}

extension StationClient {
    /// Where this device's follower identity stands with a followed station — approved, awaiting
    /// approval, removed, or nothing known — from what that station publishes (its IPNS record and
    /// social graph, read through the handle's or the configured gateway): see
    /// ``FollowedStationReader/followStatus(of:)`` for how each is told and what cannot be known.
    /// Keep what it learned with ``FollowedStationHandle/record(_:)``: a later removal is told
    /// from a pending request only by an approval seen before.
    ///
    /// - Throws: as ``reader(for:gateway:)`` and ``FollowedStationReader/followStatus(of:)``.
    public func followStatus(of station: FollowedStationHandle) async throws -> FollowStanding {
        try await reader(for: station).status()
    }
}
