#if canImport(CCurl)
import CCurl
import Transport

/// One unit of work for the curl thread: an HTTP exchange or a certificate probe.
///
/// The engine calls every method on its own thread. It hands the job a fresh or reset easy handle
/// to `configure` and owns it: after `finish` or `abort` the handle is reset for the next job.
protocol CurlJob: AnyObject, Sendable {
    /// Whether the job was cancelled before the engine started it (checked under the job's lock,
    /// because cancellation comes from any thread).
    var isCancelled: Bool { get }
    /// Sets the job's options on `handle` (fresh, or reset to libcurl's defaults). Throws
    /// `TransportError` when the job cannot start.
    func configure(_ handle: OpaquePointer) throws
    /// The transfer ended with `code` and the handle is still in the multi handle: the moment to
    /// read what removing it would close (a connect-only job's socket). Most jobs need nothing here.
    func ended(_ code: CURLcode, handle: OpaquePointer)
    /// The transfer ended with `code`; the handle is still valid (removed from the multi handle).
    func finish(_ code: CURLcode, handle: OpaquePointer)
    /// The job stops without a result from libcurl: cancelled, or the engine is shutting down.
    /// `handle` is `nil` when the job never started.
    func abort(_ kind: TransportError.Kind, message: String, handle: OpaquePointer?)
}

extension CurlJob {
    func ended(_ code: CURLcode, handle: OpaquePointer) {}
}
#endif
