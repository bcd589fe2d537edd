/// Response bodies as recorded against the real station in the project's WIRE_NOTES.md (§2),
/// copied from that text (its `…` shortenings kept inside strings), never produced by this
/// package. Bodies shown on several lines there are joined without the line breaks.
enum WireNotes {
    // §2.1
    static let healthy = #"{"status":"healthy","checks":{"database":true,"ipfs":true,"identity":true}}"#
    static let degraded = #"{"status":"degraded","checks":{"database":true,"ipfs":false,"identity":true}}"#

    // §2.2 (key order exactly as recorded)
    static let profile = #"{"uid":"da27af3e-b2ac-4d02-a894-3c22d638d1ba","mlkem_public_key":"1e0618…(2368 hex)","mldsa_public_key":"5ea9ed…(3904 hex)","endpoint":null,"ipfs_peer_id":"12D3KooWRGsW16c346uR…","ipns_name":"k51qzi5uqu5dlwnmtaju…","manifest_cid":"QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX","followers_count":0,"following_count":0,"manifest_posts":1,"manifest_posts_total":1,"manifest_posts_by_client":{"interop":1}}"#

    // §2.3
    static let delegateStart = #"{"status":"ok","pairing_id":"zr5kgIYyYMGfE5k8kI5Va0vz","expires_in_seconds":300}"#
    static let delegateConfirm = #"{"status":"ok","action":"delegate_added","uid":"da27af3e-b2ac-4d02-a894-3c22d638d1ba","device_uid":"990DCF48-…"}"#

    // §2.4
    static let postEncrypted = #"{"status":"post_ok","cid":"QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4","envelopes_cid":"QmY2b52WrNZ8SSebVA1u5tbzLsoXQMYwLozZ6AnNH4Qe7c","audience_mode":"self","audience_uids":null,"followers_raw":2,"followers_used":1,"manifest_posts":1}"#
    static let postPublic = #"{"status":"post_ok","cid":"QmTrYb…","envelopes_cid":null,"audience_mode":"public","encrypted":false,"audience_uids":null,"followers_raw":0,"followers_used":0,"manifest_posts":2}"#

    // §2.5
    static let manifest = #"{"clients":{"interop":{"posts":[{"post_cid":"QmVCrQ…","audience_mode":"self","envelopes_cid":"QmY2b5…","envelopes_count":1,"created_at":1795956595,"metadata":"320e7003c48a…(hex)"}]}}}"#

    // §2.6
    static let envelopes = #"{"v":1,"post_cid":"QmVCrQ…","envelopes":{"da27af3e-b2ac-4d02-a894-3c22d638d1ba":"0440…(2324 hex)"}}"#

    // §2.7
    static let rewrapOK = #"{"status":"ok","result":{"status":"rewrap_ok","uid":"…","device_uid":"…","post_cid":"…","envelope":"0440…(2324 hex)"}}"#
    static let rewrapErrors = [
        "post_cid QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4 not found",
        "root envelope missing for uid …",
        "device key lookup failed: …",
        "post_cid … missing envelopes_cid",
    ]

    // §2.9, §2.10
    static let share = #"{"status":"shared","post_cid":"…","audience_mode":"all","audience_uids":null,"envelopes_count":1}"#
    static let delete = #"{"status":"deleted","post_cid":"…","client":"interop","manifest_posts":1,"unpinned":["<post_cid>","<envelopes_cid>"],"gc_objects_removed":1}"#

    // §2.11
    static let inboxNew = #"{"status":"ok","result":{"status":"follow_request_pending_multi_device","rewrap_triggered":false,"devices_added":1,"pending_approval":1}}"#
    static let inboxRepeat = #"{"status":"ok","result":{"status":"follow_request_pending_multi_device","rewrap_triggered":false,"devices_added":0,"pending_approval":0}}"#
    static let inboxAlreadyRegistered = #"{"status":"ok","result":{"status":"follow_request_already_registered","uid":"U"}}"#
    static let inboxErrors = [
        "follow_request mlkem_public_key must be 2368 hex chars",
        "follow_request cannot target local uid",
    ]

    // §2.12 (fields as listed there, with example values)
    static let followers = #"{"status":"ok","followers":[{"uid":"U","alias":null,"endpoint":null,"ipns_id":null}]}"#
    static let pending = #"{"status":"ok","pending":[{"uid":"U","device_uid":"U","mlkem_public_key":"…2368","mldsa_public_key":"…3904","alias":null,"allowed":"Pending","endpoint":null,"ipns_id":null}]}"#
    static let approve = #"{"status":"ok","action":"approve_follower","uid":"U","device_uid":null,"devices_approved":1,"rewrap":{"status":"rewrap_manifest_ok","followers_allowed":2,"posts_total":2,"posts_updated":1,"posts_skipped":1,"manifest_cid":"QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX","skip_counts":{"missing_post_cid":0,"missing_envelopes_cid":0,"audience_not_all":1,"missing_root_envelope":0,"open_envelope_failed":0,"bad_sym_key_len":0,"publish_failed":0}},"updated_graph":{"following_cid":"QmA","followers_cid":"QmB","follow_decoder_envelopes_cid":"QmC"}}"#
    static let follow = #"{"status":"ok","action":"follow","target":{"uid":"T","mlkem_public_key":"…","mldsa_public_key":null,"endpoint":"https://t.example","ipns_id":null},"updated_graph":{"following_cid":"QmA","followers_cid":"QmB","follow_decoder_envelopes_cid":"QmC"},"updated_profile":"# + profile + "}"
    static let unfollow = #"{"status":"ok","action":"unfollow","target":{"uid":"T"},"updated_graph":{"following_cid":"QmA","followers_cid":"QmB","follow_decoder_envelopes_cid":"QmC"},"updated_profile":"# + profile + "}"
    static let following = #"{"status":"ok","following":[{"uid":"T","endpoint":"https://t.example","ipns_id":null,"mlkem_public_key":"…","mldsa_public_key":null}]}"#

    // §2.13
    static let storage = #"{"ipfs":{"repo_size_bytes":97337,"storage_max_bytes":10737418240,"num_objects":17,"used_percent":0.0},"device":{"total_bytes":1000,"used_bytes":66,"free_bytes":934,"used_percent":6.63},"clients":{"interop":{"size_bytes":4852,"post_count":2,"percent_of_repo":4.98}},"total_content_bytes":4852}"#
    static let storageIPFSDown = #"{"ipfs":{"error":"connection refused"},"device":{"total_bytes":1000,"used_bytes":66,"free_bytes":934,"used_percent":6.63},"clients":{},"total_content_bytes":0}"#

    // §0 item 5 and the §1 table: the error shapes.
    static let missingHeaders = #"{"detail":[{"type":"missing","loc":["header","x-cipher-uid"],"msg":"Field required","input":null},{"type":"missing","loc":["header","x-cipher-sig"],"msg":"Field required","input":null}]}"#
    static let tooLarge = #"{"error": "Request too large (max 104857600 bytes)"}"#
    static let detailMessages = [
        "bad timestamp", "stale request", "device not authorized", "device has no auth (ML-DSA) public key", "replay",
        "bad body hash", "bad signature encoding", "bad auth", "owner-only endpoint", "header/body mismatch",
        "invalid PIN", "pairing_id not found", "too many pending pairing sessions (cap=20); try again shortly",
        "self_envelope is required for non-public posts", "Invalid audience_mode: x", "content not found",
        "requested range not satisfiable", "content store unavailable",
        "Resharing to/from 'public' is not supported; create a new public post instead",
        "Post QmVCrQby2S3v3sHUsRDzLQJTHq1GZS6jkokwdNG9ELGzW4 not found in manifest",
    ]
}
