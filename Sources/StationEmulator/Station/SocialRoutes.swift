import Foundation
import Manifest
import OrderedJSON

extension StationCore {
    static let maxDevicesPerFollower = 20

    // MARK: POST /inbox

    func inbox(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [
            .required("type"), .optional("uid"), .optional("mlkem_public_key"), .optional("mldsa_public_key"),
            .optional("payload_hex"), .optional("devices", .objectList), .optional("ipns_id"),
        ])
        let message: JSONObject
        switch model.validate(request.body) {
        case let .success(object): message = object
        case let .failure(errors): return BodyModel.unprocessable(errors.items)
        }
        let type = message["type"]?.stringValue ?? ""
        guard type == "follow_request" else {
            // Deliberate exception (WIRE_NOTES §0.9): the station never authenticates these
            // (401 "bad timestamp" whatever is sent); the emulator checks the signature as the
            // protocol describes, for any Allowed device.
            if case let .denied(response) = await authorize(request, owner: false) { return response }
            let result: JSONObject = switch type {
            case "post_key_update": ["status": "unhandled_post_key_update"]
            case "manifest_update": ["status": "unhandled_manifest_update"]
            default: ["error": .string("Unknown inbox message type: \(type)")]
            }
            return .json(200, JSONOut.compact(["status": "ok", "result": .object(result)]))
        }
        let result = state.withLock { followRequest(&$0, message) }
        return .json(200, JSONOut.compact(["status": "ok", "result": .object(result)]))
    }

    private func followRequest(_ state: inout StationState, _ message: JSONObject) -> JSONObject {
        func failure(_ text: String) -> JSONObject { ["error": .string(text)] }
        let isMLKEM = { (value: JSONValue?) in value?.stringValue.map { $0.utf8.count == 2368 && $0.isStrictHex } ?? false }
        let isMLDSA = { (value: JSONValue?) in value?.stringValue.map { $0.utf8.count == 3904 && $0.isStrictHex } ?? false }
        guard let uidValue = message["uid"], uidValue.isTruthy, let uid = uidValue.stringValue else {
            return failure("follow_request missing uid")
        }
        guard uid != state.uid else { return failure("follow_request cannot target local uid") }
        let autoAccept = configuration.autoAcceptFollows
        let allowed = autoAccept ? "Allowed" : "Pending"
        let ipnsID = message["ipns_id"]?.stringValue
        var result: JSONObject
        var changed = false
        if let devices = message["devices"], !devices.isNull {
            let existing = Set(state.followers.filter { $0.uid == uid }.map(\.deviceUID))
            var added = 0
            for device in devices.arrayValue ?? [] {
                let object = device.objectValue ?? [:]
                guard let deviceValue = object["device_uid"], deviceValue.isTruthy, let deviceUID = deviceValue.stringValue,
                      let mlkemValue = object["mlkem_public_key"], mlkemValue.isTruthy else {
                    return failure("Malformed device entry: \(PythonRepr.of(device))")
                }
                guard isMLKEM(mlkemValue) else {
                    return failure("Bad mlkem_public_key for device \(deviceUID) (expected 2368 hex chars)")
                }
                let mldsa = object["mldsa_public_key"]
                if let mldsa, !mldsa.isNull, !isMLDSA(mldsa) {
                    return failure("Bad mldsa_public_key for device \(deviceUID) (expected 3904 hex chars)")
                }
                if existing.contains(deviceUID) { continue }
                guard existing.count + added < Self.maxDevicesPerFollower else {
                    return failure("too many devices for follower (cap=\(Self.maxDevicesPerFollower))")
                }
                added += 1
                state.upsertFollower(FollowerRow(uid: uid, deviceUID: deviceUID, mlkemPublicKey: mlkemValue.stringValue ?? "",
                                                 mldsaPublicKey: mldsa?.stringValue, allowed: allowed, ipnsID: ipnsID))
            }
            changed = autoAccept && added > 0
            result = [
                "status": .string(autoAccept ? "follow_accepted_multi_device" : "follow_request_pending_multi_device"),
                "rewrap_triggered": .bool(changed), "devices_added": JSONOut.int(added),
                "pending_approval": JSONOut.int(autoAccept ? 0 : added),
            ]
        } else {
            let mlkem = message["mlkem_public_key"], mldsa = message["mldsa_public_key"]
            guard isMLKEM(mlkem) else { return failure("follow_request mlkem_public_key must be 2368 hex chars") }
            if let mldsa, !mldsa.isNull, !isMLDSA(mldsa) {
                return failure("follow_request mldsa_public_key must be 3904 hex chars")
            }
            let existing = state.followers.filter { $0.uid == uid }
            if existing.contains(where: { $0.deviceUID == uid }) {
                return ["status": "follow_request_already_registered", "uid": .string(uid)]
            }
            guard existing.count < Self.maxDevicesPerFollower else {
                return failure("too many devices for follower (cap=\(Self.maxDevicesPerFollower))")
            }
            state.upsertFollower(FollowerRow(uid: uid, deviceUID: uid, mlkemPublicKey: mlkem?.stringValue ?? "",
                                             mldsaPublicKey: mldsa?.stringValue, allowed: allowed, ipnsID: ipnsID))
            changed = autoAccept
            result = [
                "status": .string(autoAccept ? "follow_accepted" : "follow_request_pending"),
                "rewrap_triggered": .bool(changed), "pending_approval": JSONOut.int(autoAccept ? 0 : 1),
            ]
        }
        if changed { result["rewrap"] = .object(rewrapAllPosts(&state)) }
        persist(state)
        log.info("Follow request from uid=\(uid) (\(allowed))", logger: "cipher_station.inbox")
        return result
    }

    // MARK: Followers

    func followers(_ request: StationRequest) async -> StationResponse {
        if case let .denied(response) = await authorize(request, owner: true) { return response }
        let list: [JSONValue] = state.withLock { state in
            var seen: [String: JSONValue] = [:]
            for row in state.sortedFollowers where row.uid != state.uid && row.allowed == "Allowed" && seen[row.uid] == nil {
                seen[row.uid] = .object(["uid": .string(row.uid), "alias": JSONOut.string(row.alias),
                                         "endpoint": JSONOut.string(row.endpoint), "ipns_id": JSONOut.string(row.ipnsID)])
            }
            return seen.keys.sorted(by: StationState.byteOrder).compactMap { seen[$0] }
        }
        return .json(200, JSONOut.compact(["status": "ok", "followers": .array(list)]))
    }

    func pendingFollowers(_ request: StationRequest) async -> StationResponse {
        if case let .denied(response) = await authorize(request, owner: true) { return response }
        let list = state.withLock { state in
            state.sortedFollowers.filter { $0.allowed != "Allowed" && $0.uid != state.uid }.map(\.json)
        }
        return .json(200, JSONOut.compact(["status": "ok", "pending": .array(list)]))
    }

    func approveFollower(_ request: StationRequest) async -> StationResponse {
        await ownerRoute(request, body: FollowerSelection.model) { body in
            let selection = FollowerSelection(body)
            return state.withLock { state -> StationResponse in
                guard selection.uid != state.uid else { return .detail(400, "cannot approve the station's own uid") }
                var updated = 0
                for index in state.followers.indices where selection.matches(state.followers[index]) {
                    state.followers[index].allowed = "Allowed"
                    updated += 1
                }
                guard updated > 0 else { return .detail(404, "no matching follower to approve") }
                let rewrap = rewrapAllPosts(&state)
                let graph = rebuildGraphs(&state)
                return .json(200, JSONOut.compact([
                    "status": "ok", "action": "approve_follower", "uid": .string(selection.uid),
                    "device_uid": JSONOut.string(selection.deviceUID),
                    "devices_approved": JSONOut.int(updated), "rewrap": .object(rewrap), "updated_graph": .object(graph),
                ]))
            }
        }
    }

    func removeFollower(_ request: StationRequest) async -> StationResponse {
        await ownerRoute(request, body: FollowerSelection.model) { body in
            let selection = FollowerSelection(body)
            return state.withLock { state -> StationResponse in
                guard selection.uid != state.uid else { return .detail(400, "cannot remove the station's own identity") }
                let matching = state.followers.filter(selection.matches)
                guard !matching.isEmpty else { return .detail(404, "no matching follower to remove") }
                let removedAllowed = matching.contains { $0.allowed == "Allowed" }
                state.followers.removeAll(where: selection.matches)
                var rewrap: JSONValue = .null, graph: JSONValue = .null
                if removedAllowed {
                    rewrap = .object(rewrapAllPosts(&state))
                    graph = .object(rebuildGraphs(&state))
                }
                persist(state)
                return .json(200, JSONOut.compact([
                    "status": "ok", "action": "remove_follower", "uid": .string(selection.uid),
                    "device_uid": JSONOut.string(selection.deviceUID),
                    "removed": JSONOut.int(matching.count), "removed_allowed": .bool(removedAllowed), "rewrap": rewrap,
                    "updated_graph": graph,
                ]))
            }
        }
    }

    // MARK: Following

    func follow(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [.required("uid"), .required("endpoint"), .required("mlkem_public_key"),
                                       .optional("mldsa_public_key"), .optional("ipns_id")])
        return await ownerRoute(request, body: model) { body in
            let row = FollowingRow(uid: body["uid"]?.stringValue ?? "", mlkemPublicKey: body["mlkem_public_key"]?.stringValue ?? "",
                                   mldsaPublicKey: body["mldsa_public_key"]?.stringValue, endpoint: body["endpoint"]?.stringValue ?? "",
                                   ipnsID: body["ipns_id"]?.stringValue)
            return state.withLock { state -> StationResponse in
                if let index = state.following.firstIndex(where: { $0.uid == row.uid }) { state.following[index] = row } else {
                    state.following.append(row)
                }
                let graph = rebuildGraphs(&state)
                return .json(200, JSONOut.compact([
                    "status": "ok", "action": "follow",
                    "target": row.json,
                    "updated_graph": .object(graph), "updated_profile": .object(profileObject(state)),
                ]))
            }
        }
    }

    func unfollow(_ request: StationRequest) async -> StationResponse {
        let model = BodyModel(fields: [.required("uid")])
        return await ownerRoute(request, body: model) { body in
            let uid = body["uid"]?.stringValue ?? ""
            return state.withLock { state -> StationResponse in
                state.following.removeAll { $0.uid == uid }
                let graph = rebuildGraphs(&state)
                return .json(200, JSONOut.compact([
                    "status": "ok", "action": "unfollow", "target": .object(["uid": .string(uid)]),
                    "updated_graph": .object(graph), "updated_profile": .object(profileObject(state)),
                ]))
            }
        }
    }

    func followingList(_ request: StationRequest) async -> StationResponse {
        if case let .denied(response) = await authorize(request, owner: true) { return response }
        let list = state.withLock { state in
            state.following.sorted { StationState.byteOrder($0.uid, $1.uid) }.map { row -> JSONValue in
                .object(["uid": .string(row.uid), "endpoint": .string(row.endpoint), "ipns_id": JSONOut.string(row.ipnsID),
                         "mlkem_public_key": .string(row.mlkemPublicKey), "mldsa_public_key": JSONOut.string(row.mldsaPublicKey)])
            }
        }
        return .json(200, JSONOut.compact(["status": "ok", "following": .array(list)]))
    }
}

/// The follower devices `/followers/approve` and `/followers/remove` act on: every device of
/// `uid`, or only `device_uid` when the body names one.
private struct FollowerSelection {
    static let model = BodyModel(fields: [.required("uid"), .optional("device_uid")])

    let uid: String
    let deviceUID: String?

    init(_ body: JSONObject) {
        uid = body["uid"]?.stringValue ?? ""
        deviceUID = body["device_uid"]?.stringValue
    }

    func matches(_ row: FollowerRow) -> Bool { row.uid == uid && (deviceUID == nil || row.deviceUID == deviceUID) }
}
