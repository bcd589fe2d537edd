import Foundation
import StationClient

/// The process exit codes, as scripts rely on them.
enum ExitCode: Int32, Sendable {
    case success = 0
    case failure = 1
    case usage = 2
    /// The station refused: auth, pairing, throttling, not found, not shared, content lost, any 4xx.
    case refused = 3
    /// The station, or an IPFS gateway, or the network could not be reached.
    case unreachable = 4
    /// `cipher sync`: done, but some actions failed (listed); the next sync tries them again, so a
    /// retry may help. Wins over ``needsAttention`` when both apply, since retrying may clear it.
    case incomplete = 5
    /// `cipher sync`: the plan deletes more files than the limit; those deletions were held back
    /// and everything else synced (`--max-delete N` lets them through).
    case waitingForDecision = 6
    /// `cipher sync`: another sync of the folder is running; nothing was changed (`--wait` waits for it).
    case busy = 7
    /// `cipher sync`: done, but some items will not sync until the user acts (``SyncPlan/skipped``:
    /// symbolic links, special files, refused or colliding names, unreadable places); a retry alone
    /// changes nothing. Scripts that retry on 5 should not retry on 8.
    case needsAttention = 8
}

/// A failure of the command line tool, carrying its exit code.
enum CLIError: Error, Sendable, CustomStringConvertible {
    /// Bad command line (exit 2).
    case usage(String)
    /// Any other failure (exit 1).
    case failure(String)
    /// Another sync of the folder is running (exit 7).
    case busy(String)
    /// A ``StationClientError``, mapped to 1, 3 or 4 (see ``exitCode``).
    case client(StationClientError)
    /// A ``StationClientError`` from the station at the URL (a followed one for `cipher follow` and
    /// `cipher read`, the paired one's new address for `cipher move`): as ``client(_:)``, with the
    /// command to trust its key (`command` is the command that takes `--fingerprint` for it).
    case followedStation(StationClientError, URL, command: String = "follow")

    /// The client error carried, if any.
    var clientError: StationClientError? {
        switch self {
        case .client(let error), .followedStation(let error, _, _): error
        case .usage, .failure, .busy: nil
        }
    }

    /// Wraps any error; station client errors keep their kind.
    static func from(_ error: any Error) -> CLIError {
        if let error = error as? CLIError { return error }
        if let error = error as? StationClientError { return .client(error) }
        return .failure("\(error)")
    }

    /// A station's refusal is 3 and no answer 4; a gateway failure is 4 when the network failed
    /// and 1 when the gateway answered (its error is not the station's refusal).
    var exitCode: ExitCode {
        switch self {
        case .usage: return .usage
        case .failure: return .failure
        case .busy: return .busy
        case .client(let error), .followedStation(let error, _, _):
            switch error.kind {
            case .unreachable, .tooSlow: return .unreachable
            case .gateway: return error.transportError == nil ? .failure : .unreachable
            case .untrustedKey, .keyChanged, .unauthorized, .throttled, .notShared, .contentLost: return .refused
            // The station's 404 or 413 is its refusal; the same decision made locally is not.
            case .notFound, .tooLarge: return error.status == nil ? .failure : .refused
            case .localFile, .pinningUnsupported: return .failure
            case .pairing:
                return error.pairingFailure == .cancelledByUser ? .failure : .refused
            case .station:
                guard let status = error.status else { return .refused }
                if (400..<500).contains(status) { return .refused }
                // A tunnel or gateway that cannot reach the station is "unreachable".
                if [502, 503, 504].contains(status) { return .unreachable }
                return .failure
            default: return .failure
            }
        }
    }

    /// A short machine-readable kind for `--json`.
    var kind: String {
        switch self {
        case .usage: "usage"
        case .failure: "failure"
        case .busy: "busy"
        case .client(let error), .followedStation(let error, _, _): "\(error.kind)"
        }
    }

    var description: String {
        switch self {
        case .usage(let text), .failure(let text), .busy(let text): return text
        case .client(let error):
            return Self.describe(error, trustCommand: { "cipher trust --fingerprint \($0)" },
                                 firstContactCommand: "cipher pair URL --fingerprint sha256//<that base64>",
                                 askAlternative: "pair from a terminal to be asked")
        case .followedStation(let error, let url, let command):
            return Self.describe(error, trustCommand: { "cipher follow \(url.absoluteString) --fingerprint \($0)" },
                                 firstContactCommand: "cipher \(command) \(url.absoluteString) --fingerprint sha256//<that base64>",
                                 askAlternative: command == "read" ? "follow it with that key" : "\(command) from a terminal to be asked")
        }
    }

    /// The text for standard error: without `verbose`, the paired station's unreachable errors
    /// (those after which the SDK searched for its new address, which it does for the paired
    /// station only) are told in a few words: what failed, what was tried, what to do. Otherwise
    /// as ``description`` (which `--json` always carries).
    func message(verbose: Bool) -> String {
        guard !verbose, case .client(let error) = self, error.kind == .unreachable,
              let search = error.underlying as? StationClientError else { return description }
        return Self.unreachable(error, search: search)
    }

    /// "Cannot reach the station at …", the failed search for its new address, and the commands
    /// that help.
    private static func unreachable(_ error: StationClientError, search: StationClientError) -> String {
        var where_ = ""
        if let url = error.transportError?.url, let host = url.host {
            where_ = " at \(url.scheme ?? "https")://\(host)" + (url.port.map { ":\($0)" } ?? "")
        }
        let reason: String
        switch error.transportError?.kind {
        case .dnsFailure?: reason = "its host name does not resolve"
        case .cannotConnect?: reason = "no connection could be made"
        case .timedOut?: reason = "it did not answer in time"
        case .tlsFailure?: reason = "the TLS handshake failed"
        default: reason = error.status.map { "a tunnel in front of it answered HTTP \($0)" } ?? error.message
        }
        var text = "cannot reach the station\(where_) (\(reason))."
        text += " Tried: finding its new address through its signed IPNS record, which failed: \(search.message)."
        text += " If the station moved, run `cipher move NEW-URL` (with --fingerprint sha256//… for a self-signed key);"
            + " otherwise check that it is running and reachable. --verbose shows the details."
        return text
    }

    /// The text of a client error; a TLS key refusal names the command that trusts the key
    /// (`trustCommand` of the presented key after a change, `firstContactCommand` the first time).
    private static func describe(_ error: StationClientError, trustCommand: (String) -> String, firstContactCommand: String,
                                 askAlternative: String) -> String {
        if error.kind == .notPaired { return "not paired: run `cipher pair URL` first (\(error.message))" }
        if error.kind == .keyChanged {
            let presented = error.presentedFingerprint?.pinString ?? "(unreadable)"
            return "\(error.operation): the station's TLS key changed: pinned \(error.expectedFingerprint?.pinString ?? "(none)"), "
                + "presented \(presented); refused. If the station's key really changed (check on the station with "
                + "`\(TrustCommand.fingerprintCommand)`), run `\(trustCommand(presented))`"
        }
        if error.kind == .unauthorized {
            return error.description + ". This device's keys are not accepted any more (revoked?): pair again with `cipher pair URL`"
        }
        if error.kind == .throttled {
            let wait = error.retryAfter.map { "in \($0.components.seconds) s" } ?? "later"
            return error.description + ". The station is rate-limiting: retry \(wait)"
        }
        if error.kind == .contentLost {
            return error.description + ". The post is listed but its bytes are gone (an in-place share destroys them); "
                + "publish it again from a copy"
        }
        if error.kind == .notShared {
            return error.description + ". Ask the station's owner to share it with you"
        }
        if error.kind == .pinningUnsupported {
            return error.description + ". This transport cannot pin TLS keys here; use CurlTransport"
        }
        if error.kind == .untrustedKey {
            return error.description + ". Read the station's fingerprint on its machine, where run.py keeps cert.pem: `"
                + TrustCommand.fingerprintCommand + "`, then pass it as `\(firstContactCommand)`"
                + " (or \(askAlternative))"
        }
        return error.description
    }
}
