import Envelope
import Foundation
import Transport

/// How many bytes each kind of answer may take in memory. A station or gateway is untrusted: an
/// answer longer than what its endpoint can return fails that call with ``StationClientError``
/// `.invalidResponse` (its ``StationClientError/transportError`` is `.responseTooLarge`) after at
/// most the limit was read, instead of the 128 MiB a transport would collect by default.
enum ResponseLimit {
    /// The station's `MAX_UPLOAD_SIZE` (100 MiB): no stored file (a post's ciphertext, a public
    /// post) is longer, since it arrived in an upload body of at most this size.
    static let storedFile = 104_857_600

    /// `POST /rewrap`: one envelope (``Envelope/hexCount``, 2,324 hex characters) with the
    /// station uid, device uid and post CID, about 2.5 KB; the margin covers long device uids and
    /// `result.error` texts.
    static let rewrap = Envelope.hexCount + 14 * 1024

    /// The most `/rewrap` answers a listing holds in memory at once: with ``rewrap`` per answer,
    /// at most 62 calls run at once whatever ``StationClientConfiguration/rewrapConcurrency`` says.
    static let listingInFlight = 1 << 20

    /// `GET /health`, `GET /storage`, and the small JSON answers of the writes (`/post`,
    /// `/post/share`, `/post/delete`, `/followers/approve`, `/followers/remove`, `/follow`,
    /// `/unfollow`, `/inbox`, `/profile/avatar`, `/privacy/flip`).
    static let small = 64 * 1024

    /// `GET /profile`, `POST /profile/update` and the pairing answers: the station's two public keys as hex (2,368 and
    /// 3,904 characters), its name, bio, CIDs and the client profile fields.
    static let profile = 1 << 20

    /// `GET /followers`, `/followers/pending`, `/following`: a row per device, each with about
    /// 6.3 KB of public-key hex, so room for about 2,500 devices.
    static let followers = 16 << 20

    /// An envelope set (`envelopes_cid`) or decoder-envelope document read from the gateway: one
    /// envelope (about 2.4 KB with its uid) per recipient device, so room for about 6,500.
    static let envelopeSet = 16 << 20

    /// The most bytes one manifest entry is allowed on average (CIDs, audience, sealed metadata).
    static let manifestBytesPerPost = 4 * 1024

    /// The manifest of a station with at most `maximumPosts` posts (all namespaces together):
    /// ``manifestBytesPerPost`` each, plus 64 KiB for the document around them.
    static func manifest(maximumPosts: Int) -> Int {
        let (posts, overflow) = max(1, maximumPosts).multipliedReportingOverflow(by: manifestBytesPerPost)
        return overflow ? Int.max / 2 : min(Int.max / 2, posts + 64 * 1024)
    }

    /// How many `/rewrap` calls a listing of `entryCount` posts runs at once: the configured
    /// concurrency, bounded so their answers fit ``listingInFlight``.
    static func listingWidth(rewrapConcurrency: Int, entryCount: Int) -> Int {
        max(1, min(rewrapConcurrency, entryCount, listingInFlight / rewrap))
    }

    /// The most envelope sets a followed station's listing holds in memory at once (with
    /// ``envelopeSet`` each: two).
    static let followedInFlight = 32 << 20

    /// How many envelope sets a followed station's listing of `entryCount` posts fetches at once:
    /// the configured concurrency, bounded so the sets fit ``followedInFlight``.
    static func followedListingWidth(concurrency: Int, entryCount: Int) -> Int {
        max(1, min(concurrency, entryCount, followedInFlight / envelopeSet))
    }

    /// Transfer options that collect at most `limit` bytes of the answer in memory.
    static func options(_ limit: Int, timeouts: TransferTimeouts) -> TransferOptions {
        TransferOptions(response: .memory(limit: limit), timeouts: timeouts)
    }
}
