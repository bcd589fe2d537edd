import Foundation
import Transport

/// The output half a ``BoundStreamPump`` writes into: the bound stream pair's `OutputStream` on
/// Apple platforms (``RunLoopOutput``; tests give it one of their own).
protocol PumpOutput: AnyObject, Sendable {
    /// Called on the pump's thread before anything else.
    func open()
    /// Whether a write would take at least one byte without blocking.
    var hasSpaceAvailable: Bool { get }
    func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int
    /// Called on the pump's thread last.
    func close()
    /// Blocks the pump's thread until the output reports an event (space, an error, its end) or
    /// ``interrupt()`` is called, or at most `timeout` seconds; returns at once for an event or an
    /// interruption that came since the last wait.
    func waitForEvent(timeout: TimeInterval)
    /// Ends the wait under way, or the next one (any thread).
    func interrupt()
}

/// Hands a request body to Darwin's URLSession through a bound stream pair: URLSession reads the
/// input half, and a thread of ours copies the body source into the output half.
///
/// Darwin's URLSession cannot read a custom `InputStream` subclass (it schedules the stream on a
/// run loop through private methods), so the bound pair is the supported path. The thread blocks on
/// the source, never on a Swift concurrency thread, and never in a write: it writes only while the
/// pair has space, and otherwise sleeps until the output's next event (URLSession took bytes) or
/// `stop()` (the transfer failed, was cancelled or finished, or URLSession asked for a new stream)
/// wakes it: no timer, so a stalled upload costs no wake-ups. The output half is closed on every
/// way out. The logic is platform-neutral; only the pair itself is Darwin's (``RunLoopOutput``).
final class BoundStreamPump: Sendable {
    /// Where the pump's thread is.
    enum Phase: Equatable, Sendable {
        /// Created; the thread has not run yet.
        case starting
        /// Reading the source or writing to the output.
        case copying
        /// The output is full: waiting for the reader to take bytes, or for `stop()`.
        case waitingForSpace
        /// The thread has ended and closed the output.
        case finished
    }

    private struct State {
        var phase = Phase.starting
        var stopRequested = false
    }

    private let state = Locked(State())
    /// Signalled when the thread ends, for ``waitUntilFinished(timeout:)``.
    private let wake = NSCondition()
    private let writer: Writer

    /// The longest sleep while the output is full before asking it again: a safety net for an
    /// event that never comes, not the way the pump learns of space (one wake-up a second at
    /// most while an upload waits on the network, against 500 for the 2 ms poll it replaces).
    static let eventWaitLimit: TimeInterval = 1

    #if !canImport(FoundationNetworking)
    /// An input stream that yields `source`'s bytes, and the pump copying them; `nil` if no stream
    /// pair could be made.
    static func start(reading source: any BlockingBodySource, bufferSize: Int) -> (input: InputStream, pump: BoundStreamPump)? {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: bufferSize, inputStream: &input, outputStream: &output)
        guard let input, let output else { return nil }
        let pump = BoundStreamPump(source: source, output: RunLoopOutput(output), chunkSize: bufferSize)
        pump.start()
        return (input, pump)
    }
    #endif

    private let eventWaitLimit: TimeInterval

    /// A pump from `source` into `output`; `start()` runs it on a thread of its own.
    init(source: any BlockingBodySource, output: any PumpOutput, chunkSize: Int, eventWaitLimit: TimeInterval = eventWaitLimit) {
        writer = Writer(source: source, output: output, chunkSize: chunkSize)
        self.eventWaitLimit = eventWaitLimit
    }

    /// Where the thread is.
    var phase: Phase { state.withLock { $0.phase } }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "URLSessionTransport body"
        thread.start()
    }

    /// Ends the copy: the thread stops at its next write or wait and closes the output. The source
    /// is closed by its owner (which wakes a read blocked on it).
    func stop() {
        state.withLock { $0.stopRequested = true }
        writer.output.interrupt()
    }

    /// Waits until the thread has ended, at most `timeout` seconds; `true` if it has.
    func waitUntilFinished(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        wake.lock()
        defer { wake.unlock() }
        while phase != .finished {
            guard wake.wait(until: deadline) else { return phase == .finished }
        }
        return true
    }

    private var stopRequested: Bool { state.withLock { $0.stopRequested } }

    private func set(_ phase: Phase) {
        state.withLock { $0.phase = phase }
    }

    private func run() {
        set(.copying)
        writer.output.open()
        defer {
            writer.output.close()
            set(.finished)
            wake.lock()
            wake.broadcast()
            wake.unlock()
        }
        var buffer = [UInt8](repeating: 0, count: writer.chunkSize)
        while !stopRequested {
            let result = buffer.withUnsafeMutableBytes { writer.source.read(into: $0) }
            // .end: the body is complete. .failed: the transfer was told why and cancels itself.
            guard case .bytes(let count) = result else { return }
            guard writeAll(buffer, count: count) else {
                writer.source.close()
                return
            }
        }
    }

    /// Writes `count` bytes, waiting for space between writes; `false` when stopped or the output
    /// fails.
    private func writeAll(_ buffer: [UInt8], count: Int) -> Bool {
        var offset = 0
        while offset < count {
            guard !stopRequested else { return false }
            guard writer.output.hasSpaceAvailable else {
                set(.waitingForSpace)
                writer.output.waitForEvent(timeout: eventWaitLimit)
                set(.copying)
                continue
            }
            let written = buffer.withUnsafeBufferPointer { bytes -> Int in
                guard let base = bytes.baseAddress else { return -1 }
                return writer.output.write(base + offset, maxLength: count - offset)
            }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// What the thread works with; touched by that one thread only (and `start` before it),
    /// hence the unchecked `Sendable`.
    private final class Writer: @unchecked Sendable {
        let source: any BlockingBodySource
        let output: any PumpOutput
        let chunkSize: Int

        init(source: any BlockingBodySource, output: any PumpOutput, chunkSize: Int) {
            self.source = source
            self.output = output
            self.chunkSize = max(4096, chunkSize)
        }
    }
}

#if !canImport(FoundationNetworking)
/// The bound pair's output half, scheduled on the pump thread's run loop: its space events (and
/// ``interrupt()``) end the thread's ``waitForEvent(timeout:)``, which runs that run loop, so the
/// pump sleeps until URLSession has taken bytes. (FoundationNetworking has no bound pair.)
final class RunLoopOutput: NSObject, PumpOutput, StreamDelegate, @unchecked Sendable {
    private let output: OutputStream
    /// Guards `runLoop` and `eventPending`; the rest is the pump thread's.
    private let lock = NSCondition()
    private var runLoop: CFRunLoop?
    private var eventPending = false

    init(_ output: OutputStream) {
        self.output = output
        super.init()
        output.delegate = self
    }

    func open() {
        let current = RunLoop.current
        lock.lock()
        runLoop = current.getCFRunLoop()
        lock.unlock()
        output.schedule(in: current, forMode: .default)
        output.open()
    }

    var hasSpaceAvailable: Bool { output.hasSpaceAvailable }

    func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int { output.write(buffer, maxLength: length) }

    func close() {
        output.close()
        output.remove(from: .current, forMode: .default)
        // The delegate is not retained by the stream.
        output.delegate = nil
        lock.lock()
        runLoop = nil
        lock.unlock()
    }

    func waitForEvent(timeout: TimeInterval) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        // One run returns after the stream's event (a source handled) or the block `interrupt()`
        // queued, which stops it; a block queued before the run starts runs, and stops it, first.
        while !takePendingEvent(), Date() < deadline {
            guard RunLoop.current.run(mode: .default, before: deadline) else {
                // No source to wait on (cannot happen while the stream is scheduled): sleep
                // until an interruption or the deadline rather than spin.
                lock.lock()
                if !eventPending { _ = lock.wait(until: deadline) }
                lock.unlock()
                continue
            }
        }
    }

    func interrupt() {
        lock.lock()
        eventPending = true
        let loop = runLoop
        lock.broadcast()
        lock.unlock()
        guard let loop else { return }
        CFRunLoopPerformBlock(loop, CFRunLoopMode.defaultMode.rawValue) { CFRunLoopStop(CFRunLoopGetCurrent()) }
        CFRunLoopWakeUp(loop)
    }

    /// The stream's delegate call, on the pump thread while it runs its run loop.
    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        lock.lock()
        eventPending = true
        lock.unlock()
    }

    private func takePendingEvent() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let pending = eventPending
        eventPending = false
        return pending
    }
}
#endif
