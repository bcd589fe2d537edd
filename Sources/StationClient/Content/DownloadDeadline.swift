import Foundation
import Transport

/// The overall deadline of one download from the station: the configuration's grace period plus
/// the most bytes the download may bring at the slowest rate allowed
/// (``StationClientConfiguration/minimumDownloadRate``), so a station that trickles bytes just
/// under the idle limit cannot stretch it without bound. Each attempt (a resume too) gets what is
/// left as its total time limit.
struct DownloadDeadline {
    /// When the download must have ended, or `nil` when the rate is 0 (no deadline).
    let end: Date?
    let rate: Int
    private let timeouts: TransferTimeouts

    init(limit: Int64, configuration: StationClientConfiguration, now: Date = Date()) {
        rate = configuration.minimumDownloadRate
        timeouts = configuration.transferTimeouts
        if rate > 0 {
            let seconds = max(0, configuration.downloadGracePeriod) + Double(max(0, limit)) / Double(rate)
            end = now.addingTimeInterval(min(seconds, 365 * 86_400))
        } else {
            end = nil
        }
    }

    /// The time limits of the next attempt: the configuration's, with a total no later than the
    /// deadline.
    ///
    /// - Throws: ``StationClientError`` `.tooSlow` when the deadline has passed.
    func timeouts(operation: String, now: Date = Date()) throws -> TransferTimeouts {
        guard let end else { return timeouts }
        let left = end.timeIntervalSince(now)
        guard left > 0 else { throw tooSlow(written: nil, operation: operation) }
        return TransferTimeouts(idle: timeouts.idle, total: min(timeouts.total ?? left, left))
    }

    /// `error` as the client reports it: `.tooSlow` when it is a time limit that ran out at the
    /// deadline, otherwise wrapped as any error below the client.
    func explain(_ error: any Error, written: Int64?, operation: String, now: Date = Date()) -> StationClientError {
        let wrapped = StationClientError.wrap(error, operation: operation)
        guard let end, now >= end, wrapped.transportError?.kind == .timedOut else { return wrapped }
        var slow = tooSlow(written: written, operation: operation)
        slow.transportError = wrapped.transportError
        slow.underlying = error
        return slow
    }

    private func tooSlow(written: Int64?, operation: String) -> StationClientError {
        let got = written.map { " (\($0) bytes arrived)" } ?? ""
        return StationClientError(.tooSlow, operation: operation,
                                  message: "the download did not finish by its deadline at \(rate) bytes/s on average\(got)")
    }
}
