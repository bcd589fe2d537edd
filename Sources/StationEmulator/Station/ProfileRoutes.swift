import Foundation
import Manifest
import OrderedJSON
import ContentAddressing

extension StationCore {
    /// The namespace the station keeps its social profile in.
    static let profileClient = "cipherframe"

    /// Merges `fields` into `clients.cipherframe.profile`, stamps `updated_at`, republishes the
    /// manifest (`set_client_profile`). Call under the lock.
    func setClientProfile(_ state: inout StationState, _ fields: JSONObject) -> JSONObject {
        var profile = state.manifest.clients[Self.profileClient]?.profile ?? ClientProfile()
        profile.merge(fields)
        profile.merge(["updated_at": JSONOut.int(Int(now))])
        state.ledger.setProfile(profile, forClient: Self.profileClient)
        publishManifest(&state)
        return profile.fields
    }

    /// `POST /profile/update`: display name, username, bio, link; trimmed, validated, an empty
    /// value clears the field.
    func updateProfile(_ request: StationRequest) async -> StationResponse {
        let editable = ["display_name", "username", "bio", "link"]
        let model = BodyModel(fields: editable.map { .optional($0) })
        return await ownerRoute(request, body: model) { body in
            var fields = JSONObject()
            for field in editable {
                guard let raw = body[field] else { continue }
                guard let text = raw.stringValue else {
                    fields[field] = .null
                    continue
                }
                let value = text.pythonStripped
                if value.isEmpty {
                    fields[field] = .null
                    continue
                }
                if let problem = Self.profileProblem(field, value) { return .detail(400, problem) }
                fields[field] = .string(value)
            }
            let profile: JSONObject = state.withLock { state in
                guard !fields.isEmpty else { return state.manifest.clients[Self.profileClient]?.profile?.fields ?? [:] }
                return setClientProfile(&state, fields)
            }
            return .json(200, JSONOut.compact(["status": "profile_updated", "profile": .object(profile)]))
        }
    }

    /// The station's validation message for a profile field, or `nil` when the value is fine.
    static func profileProblem(_ field: String, _ value: String) -> String? {
        switch field {
        case "display_name": return value.count > 80 ? "display_name must be <= 80 characters" : nil
        case "username":
            let valid = (1...30).contains(value.unicodeScalars.count) && value.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "_")
            }
            return valid ? nil : "username must match ^[A-Za-z0-9._]{1,30}$"
        case "bio": return value.count > 300 ? "bio must be <= 300 characters" : nil
        case "link":
            if value.count > 200 { return "link must be <= 200 characters" }
            let lowered = value.lowercased()
            return lowered.hasPrefix("http://") || lowered.hasPrefix("https://") ? nil : "link must be a http(s):// URL"
        default: return "Unknown profile field: \(field)"
        }
    }

    /// `POST /profile/avatar`: the file is stored as a public (plaintext) blob and its CID becomes
    /// `avatar_cid`.
    func updateAvatar(_ request: StationRequest) async -> StationResponse {
        var parts: [FormPart] = []
        if case let .some(.some(boundary)) = MultipartParser.boundary(contentType: request.header("content-type")) {
            guard let parsed = try? MultipartParser.parse(request.body, boundary: boundary) else {
                return .detail(400, "There was an error parsing the body")
            }
            parts = parsed
        }
        if case let .denied(response) = await authorize(request, owner: true) { return response }
        guard let file = parts.first(where: { $0.name == "file" && $0.filename != nil }) else {
            return BodyModel.unprocessable([BodyModel.error("missing", loc: ["body", "file"], "Field required", input: .null)])
        }
        let cid = blocks.add(file.data)
        state.withLock { state in _ = setClientProfile(&state, ["avatar_cid": .string(cid)]) }
        return .json(200, JSONOut.compact(["status": "avatar_updated", "avatar_cid": .string(cid)]))
    }
}
