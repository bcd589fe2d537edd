#if canImport(CCurl)
import CCurl
import Foundation
import Transport

/// Runs every transfer of one `CurlTransport` on a dedicated thread that drives a curl multi handle.
///
/// Swift tasks never block on the network: they hand jobs to this thread through a locked inbox and
/// wake it with `curl_multi_wakeup`, the only multi call libcurl allows from other threads. Every
/// other libcurl call happens on this thread, so easy handles are never shared. The multi handle
/// keeps the connection cache (connections are reused across requests, and HTTP/2 streams to one
/// origin share a connection), and finished easy handles are reset and kept for the next job.
final class CurlEngine: @unchecked Sendable {
    enum Command {
        case start(any CurlJob)
        case cancel(any CurlJob)
        case resume(any CurlJob)
        case shutdown
    }

    private struct Inbox {
        var commands: [Command] = []
        var closed = false
    }

    /// `nil` when libcurl could not be set up; then every job fails at once with `setupFailure`.
    private let multi: OpaquePointer?
    let setupFailure: String?
    private let inbox = Locked(Inbox())
    /// Running jobs by easy handle. Only the curl thread touches it.
    private var running: [OpaquePointer: any CurlJob] = [:]
    /// Easy handles of finished jobs, reset and ready for the next one. Curl thread only.
    private var spareHandles: [OpaquePointer] = []
    private let maximumSpareHandles: Int

    init(maximumConnections: Int) {
        maximumSpareHandles = max(1, maximumConnections)
        let global = CurlGlobal.initialized
        var handle: OpaquePointer?
        if global == CURLE_OK { handle = curl_multi_init() }
        multi = handle
        if global != CURLE_OK {
            setupFailure = "curl_global_init failed: \(String(cString: curl_easy_strerror(global)))"
        } else if handle == nil {
            setupFailure = "curl_multi_init failed"
        } else {
            setupFailure = nil
        }
        guard let handle else { return }
        _ = ccurl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, max(1, maximumConnections))
        // Requests to one HTTP/2 origin become streams of one connection (libcurl's default since
        // 7.62, set so that it holds whatever the build's default).
        _ = ccurl_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in
            if let multi { run(multi) }
        }
        thread.name = "CurlTransport"
        thread.start()
    }

    /// Queues a command for the curl thread. After shutdown, a `start` aborts the job at once.
    func post(_ command: Command) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.closed, let multi else { return false }
            inbox.commands.append(command)
            // Under the lock, so the thread cannot close the multi handle between check and wake-up.
            _ = curl_multi_wakeup(multi)
            return true
        }
        if !accepted, case .start(let job) = command {
            job.abort(.other, message: setupFailure ?? "the transport has shut down", handle: nil)
        }
    }

    // MARK: The curl thread

    private func run(_ multi: OpaquePointer) {
        var stopping = false
        // Two buffers swapped under the lock, so taking the commands allocates nothing.
        var commands: [Command] = []
        while !stopping {
            inbox.withLock { inbox in swap(&commands, &inbox.commands) }
            defer { commands.removeAll(keepingCapacity: true) }
            for command in commands {
                switch command {
                case .start(let job): start(job, multi: multi)
                case .cancel(let job): stop(job, kind: .cancelled, message: "the transfer was cancelled", multi: multi)
                case .resume(let job):
                    if let handle = handle(of: job) { _ = curl_easy_pause(handle, CCURL_PAUSE_CONT) }
                case .shutdown: stopping = true
                }
            }
            if stopping { break }
            if !running.isEmpty {
                var stillRunning: Int32 = 0
                _ = curl_multi_perform(multi, &stillRunning)
                collectFinished(multi)
            }
            var events: Int32 = 0
            // Sleeps until a socket is ready, a curl timer fires or `post` wakes it up.
            _ = curl_multi_poll(multi, nil, 0, 1000, &events)
        }
        let leftover = inbox.withLock { inbox in
            inbox.closed = true
            return inbox.commands
        }
        for command in leftover {
            if case .start(let job) = command { job.abort(.cancelled, message: "the transport has shut down", handle: nil) }
        }
        for job in Array(running.values) {
            stop(job, kind: .cancelled, message: "the transport has shut down", multi: multi)
        }
        for handle in spareHandles { curl_easy_cleanup(handle) }
        spareHandles.removeAll()
        _ = curl_multi_cleanup(multi)
    }

    /// A handle for a new job: a spare one (already reset) or a new one.
    private func takeHandle() -> OpaquePointer? {
        spareHandles.popLast() ?? curl_easy_init()
    }

    /// Keeps a finished job's handle for the next job, reset to libcurl's defaults (a reset keeps
    /// the handle's buffers and DNS and TLS session caches, and connections stay in the multi
    /// handle's cache either way).
    private func recycle(_ handle: OpaquePointer) {
        guard spareHandles.count < maximumSpareHandles else {
            curl_easy_cleanup(handle)
            return
        }
        curl_easy_reset(handle)
        spareHandles.append(handle)
    }

    private func start(_ job: any CurlJob, multi: OpaquePointer) {
        if job.isCancelled {
            job.abort(.cancelled, message: "the transfer was cancelled", handle: nil)
            return
        }
        guard let handle = takeHandle() else {
            job.abort(.other, message: "curl_easy_init failed", handle: nil)
            return
        }
        do {
            try job.configure(handle)
        } catch {
            let failure = error as? TransportError
            job.abort(failure?.kind ?? .other, message: failure?.message ?? "\(error)", handle: nil)
            // A handle that took some options is not reused: a reset would do, but a rejected
            // setup is rare enough to start clean.
            curl_easy_cleanup(handle)
            return
        }
        let added = curl_multi_add_handle(multi, handle)
        guard added == CURLM_OK else {
            job.abort(.other, message: "curl_multi_add_handle: \(String(cString: curl_multi_strerror(added)))",
                      handle: handle)
            curl_easy_cleanup(handle)
            return
        }
        running[handle] = job
    }

    private func stop(_ job: any CurlJob, kind: TransportError.Kind, message: String, multi: OpaquePointer) {
        guard let handle = handle(of: job) else { return }  // already finished: nothing to stop
        running[handle] = nil
        _ = curl_multi_remove_handle(multi, handle)
        job.abort(kind, message: message, handle: handle)
        recycle(handle)
    }

    private func collectFinished(_ multi: OpaquePointer) {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = ccurl_msg_result(message)
            guard let job = running.removeValue(forKey: handle) else { continue }
            job.ended(code, handle: handle)
            _ = curl_multi_remove_handle(multi, handle)
            job.finish(code, handle: handle)
            recycle(handle)
        }
    }

    private func handle(of job: any CurlJob) -> OpaquePointer? {
        running.first { $0.value === job }?.key
    }
}

/// Owns a `CurlEngine` for one `CurlTransport`. When the transport and every stream it handed out
/// are gone, this shuts the engine's thread down.
final class CurlEngineLifetime: Sendable {
    let engine: CurlEngine

    init(maximumConnections: Int) { engine = CurlEngine(maximumConnections: maximumConnections) }

    deinit { engine.post(.shutdown) }
}

/// `curl_global_init` runs once per process, the first time a transport is created. Swift runs a
/// `static let` initializer exactly once, thread-safely.
enum CurlGlobal {
    static let initialized: CURLcode = curl_global_init(CCURL_GLOBAL_ALL)
}
#endif
