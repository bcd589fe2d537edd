import Foundation
import Signing

/// Maps a request to the station route that handles it, with the station's middleware in front:
/// the 413 size check on declared `Content-Length` for the body-hashed paths, then FastAPI's
/// 404/405 for unknown paths and methods.
struct StationRouter: Sendable {
    let core: StationCore

    private static let routes: [String: String] = [
        "/health": "GET", "/profile": "GET", "/storage": "GET", "/delegate/start": "POST", "/delegate/confirm": "POST",
        "/post": "POST", "/rewrap": "POST", "/post/share": "POST", "/post/delete": "POST", "/inbox": "POST",
        "/followers": "GET", "/followers/pending": "GET", "/followers/approve": "POST", "/followers/remove": "POST",
        "/follow": "POST", "/unfollow": "POST", "/following": "GET", "/profile/update": "POST", "/profile/avatar": "POST",
        "/privacy/flip": "POST",
    ]

    /// Whether a request with this path and declared length is refused before its body is read.
    func isTooLarge(path: String, declaredLength: String?) -> Bool {
        guard RequestVerifier.bodyHashedPaths.contains(path), let declaredLength,
              !declaredLength.isEmpty, declaredLength.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return false }
        // A digit string too long for Int is certainly over the limit.
        return Int(declaredLength).map { $0 > core.configuration.maximumUploadSize } ?? true
    }

    /// The 413 answer.
    var tooLargeResponse: StationResponse {
        .json(413, JSONOut.compact(["error": .string("Request too large (max \(core.configuration.maximumUploadSize) bytes)")]))
    }

    func route(_ request: StationRequest) async -> StationResponse {
        let path = request.path
        if isTooLarge(path: path, declaredLength: request.header("content-length")) { return tooLargeResponse }
        let method = request.method == "HEAD" ? "GET" : request.method
        if path.hasPrefix("/content/") {
            let cid = String(path.dropFirst("/content/".count))
            guard !cid.isEmpty, !cid.contains("/") else { return .detail(404, "Not Found") }
            guard method == "GET" else { return methodNotAllowed("GET") }
            return await core.content(request, cid: cid)
        }
        guard let allowed = Self.routes[path] else { return .detail(404, "Not Found") }
        guard method == allowed else { return methodNotAllowed(allowed) }
        switch path {
        case "/health": return core.health()
        case "/profile": return core.profile()
        case "/storage": return core.storage()
        case "/delegate/start": return core.delegateStart(request)
        case "/delegate/confirm": return core.delegateConfirm(request)
        case "/post": return await core.createPost(request)
        case "/rewrap": return await core.rewrap(request)
        case "/post/share": return await core.share(request)
        case "/post/delete": return await core.deletePost(request)
        case "/inbox": return await core.inbox(request)
        case "/followers": return await core.followers(request)
        case "/followers/pending": return await core.pendingFollowers(request)
        case "/followers/approve": return await core.approveFollower(request)
        case "/followers/remove": return await core.removeFollower(request)
        case "/follow": return await core.follow(request)
        case "/unfollow": return await core.unfollow(request)
        case "/following": return await core.followingList(request)
        case "/profile/update": return await core.updateProfile(request)
        case "/profile/avatar": return await core.updateAvatar(request)
        case "/privacy/flip": return await core.flipPrivacy(request)
        default: return .detail(404, "Not Found")
        }
    }

    private func methodNotAllowed(_ allowed: String) -> StationResponse {
        var response = StationResponse.detail(405, "Method Not Allowed")
        response.headers.insert(("allow", allowed), at: 0)
        return response
    }
}
