import CCurl
import Foundation
import Transport

/// Runs every transfer of one `CurlTransport` on a dedicated thread that drives a curl multi handle.
///
/// Swift tasks never block on the network: they hand jobs to this thread through a locked inbox and
/// wake it with `curl_multi_wakeup`, the one multi call libcurl allows from other threads. Every
/// other libcurl call happens on this thread, so easy handles are never shared. The multi handle
/// keeps a connection cache, which gives connection reuse across requests.
final class CurlEngine: @unchecked Sendable {
    enum Command {
        case start(any CurlJob)
        case cancel(any CurlJob)
        case resume(any CurlJob)
        case startDirect(DirectExchange)
        case cancelDirect(DirectExchange)
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
    /// Direct exchanges in progress (connecting, sending or receiving). Curl thread only.
    private var directs: [DirectExchange] = []
    /// Idle connections of direct exchanges. Curl thread only.
    private var directPool: DirectConnectionPool
    /// Seconds between answers of pipelined requests, per origin, learned from finished pipelines.
    /// Curl thread only.
    private var answerIntervals: [String: Double] = [:]
    /// The poll entries of the last wait, matched to their exchanges. Curl thread only.
    private var waitEntries: [curl_waitfd] = []
    private var waitOwners: [DirectExchange] = []
    /// The receive buffer of direct exchanges (allocated once; only the curl thread reads into it).
    private let receiveBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    init(maximumConnections: Int) {
        directPool = DirectConnectionPool(limit: maximumConnections)
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
        let thread = Thread { [self] in
            if let multi { run(multi) }
        }
        thread.name = "CurlTransport"
        thread.start()
    }

    deinit { receiveBuffer.deallocate() }

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
        if !accepted, case .startDirect(let exchange) = command {
            exchange.fail(.other, message: setupFailure ?? "the transport has shut down")
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
                case .startDirect(let exchange): startDirect(exchange, multi: multi)
                case .cancelDirect(let exchange):
                    endDirect(exchange, with: exchange.error(.cancelled, "the transfer was cancelled"), multi: multi)
                case .shutdown: stopping = true
                }
            }
            if stopping { break }
            serviceDirects(multi: multi)
            // Without easy handles libcurl has nothing to do (direct exchanges are not its).
            if !running.isEmpty {
                var stillRunning: Int32 = 0
                _ = curl_multi_perform(multi, &stillRunning)
                collectFinished(multi)
            }
            let timeout = directDeadlines(multi: multi)
            prepareWaitEntries()
            var events: Int32 = 0
            // Sleeps until a socket is ready, a curl timer fires or `post` wakes it up.
            let count = UInt32(waitEntries.count)
            waitEntries.withUnsafeMutableBufferPointer { entries in
                _ = curl_multi_poll(multi, count == 0 ? nil : entries.baseAddress, count, timeout, &events)
            }
        }
        let leftover = inbox.withLock { inbox in
            inbox.closed = true
            return inbox.commands
        }
        for command in leftover {
            switch command {
            case .start(let job): job.abort(.cancelled, message: "the transport has shut down", handle: nil)
            case .startDirect(let exchange): exchange.fail(.cancelled, message: "the transport has shut down")
            default: break
            }
        }
        for exchange in directs {
            endDirect(exchange, with: exchange.error(.cancelled, "the transport has shut down"), multi: multi)
        }
        for job in Array(running.values) {
            stop(job, kind: .cancelled, message: "the transport has shut down", multi: multi)
        }
        directPool.closeAll()
        _ = curl_multi_cleanup(multi)
    }

    // MARK: Direct exchanges (curl thread)

    private func startDirect(_ exchange: DirectExchange, multi: OpaquePointer) {
        if exchange.isCancelled {
            exchange.fail(.cancelled, message: "the transfer was cancelled")
            return
        }
        let now = Self.monotonicSeconds()
        exchange.begin(now: now, answerInterval: answerIntervals[exchange.first.origin])
        directs.append(exchange)
        if let socket = directPool.take(exchange.first.origin, now: now) {
            exchange.attach(socket: socket, reused: true, now: now)
            advance(exchange, multi: multi)
        } else {
            connect(exchange, multi: multi)
        }
    }

    private func connect(_ exchange: DirectExchange, multi: OpaquePointer) {
        exchange.markConnecting()
        let job = DirectConnectJob(exchange: exchange) { [unowned self, unowned exchange] result in
            exchange.connectJob = nil
            switch result {
            case .success(let socket):
                exchange.attach(socket: socket, reused: false, now: Self.monotonicSeconds())
                advance(exchange, multi: multi)
            case .failure(let error):
                endDirect(exchange, with: error, multi: multi)
            }
        }
        exchange.connectJob = job
        start(job, multi: multi)
    }

    /// Moves the exchange's bytes and ends it when it is over.
    private func advance(_ exchange: DirectExchange, multi: OpaquePointer) {
        switch exchange.pump(now: Self.monotonicSeconds(), scratch: receiveBuffer) {
        case .waiting:
            break
        case .done(let reusable):
            learnAnswerInterval(from: exchange)
            removeDirect(exchange)
            let socket = exchange.detachSocket()
            if reusable {
                directPool.put(socket, origin: exchange.first.origin, now: Self.monotonicSeconds())
            } else {
                _ = close(socket)
            }
            exchange.succeed()
        case .retry:
            // The server had closed the idle connection: a fresh one gets the request.
            _ = close(exchange.prepareRetry())
            connect(exchange, multi: multi)
        case .failed(let error):
            endDirect(exchange, with: error, multi: multi)
        }
    }

    /// Updates the origin's answer interval from a pipeline that ended on one connection.
    private func learnAnswerInterval(from exchange: DirectExchange) {
        let answers = exchange.answeredOnConnection
        guard answers >= 2, answers == exchange.setups.count else { return }
        let interval = max(0, Self.monotonicSeconds() - exchange.sentAt) / Double(answers)
        let origin = exchange.first.origin
        answerIntervals[origin] = answerIntervals[origin].map { ($0 + interval) / 2 } ?? interval
    }

    private func endDirect(_ exchange: DirectExchange, with error: TransportError, multi: OpaquePointer) {
        guard removeDirect(exchange) else { return }
        if let job = exchange.connectJob {
            exchange.connectJob = nil
            if let handle = handle(of: job) {
                running[handle] = nil
                _ = curl_multi_remove_handle(multi, handle)
                curl_easy_cleanup(handle)
            }
        }
        let socket = exchange.detachSocket()
        if socket >= 0 { _ = close(socket) }
        exchange.fail(error)
    }

    /// Moves bytes for every exchange whose socket the last wait reported ready, and for pipelines
    /// whose time to read has come.
    private func serviceDirects(multi: OpaquePointer) {
        for (entry, exchange) in zip(waitEntries, waitOwners) where entry.revents != 0 {
            guard exchange.stage == .sending || exchange.stage == .receiving else { continue }
            advance(exchange, multi: multi)
        }
        let now = Self.monotonicSeconds()
        for exchange in directs where exchange.readingDue(now: now) {
            advance(exchange, multi: multi)
        }
    }

    /// Ends the exchanges past a time limit; returns the poll timeout in milliseconds.
    private func directDeadlines(multi: OpaquePointer) -> Int32 {
        let now = Self.monotonicSeconds()
        directPool.closeExpired(now: now)
        var timeout = 1000.0
        for exchange in directs {
            if let error = exchange.expired(now: now) {
                endDirect(exchange, with: error, multi: multi)
            } else if let left = exchange.secondsToDeadline(now: now) {
                timeout = min(timeout, max(1, (left * 1000).rounded(.up)))
            }
        }
        return Int32(timeout)
    }

    @discardableResult
    private func removeDirect(_ exchange: DirectExchange) -> Bool {
        guard let index = directs.firstIndex(where: { $0 === exchange }) else { return false }
        directs.remove(at: index)
        return true
    }

    private func prepareWaitEntries() {
        // Built in locals and stored once: each access to a stored property of a class is checked
        // for exclusivity at run time.
        var entries = waitEntries
        var owners = waitOwners
        entries.removeAll(keepingCapacity: true)
        owners.removeAll(keepingCapacity: true)
        for exchange in directs {
            let events = exchange.pollEvents
            guard events != 0, exchange.socket >= 0 else { continue }
            entries.append(curl_waitfd(fd: exchange.socket, events: events, revents: 0))
            owners.append(exchange)
        }
        waitEntries = entries
        waitOwners = owners
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private func start(_ job: any CurlJob, multi: OpaquePointer) {
        if job.isCancelled {
            job.abort(.cancelled, message: "the transfer was cancelled", handle: nil)
            return
        }
        let handle: OpaquePointer
        do {
            handle = try job.makeHandle()
        } catch let error as TransportError {
            job.abort(error.kind, message: error.message, handle: nil)
            return
        } catch {
            job.abort(.other, message: "\(error)", handle: nil)
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
        curl_easy_cleanup(handle)
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
            curl_easy_cleanup(handle)
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
