import Foundation
import Transport

/// The sync state of a run and its journal writes, in one place: every change to the state and
/// every write of it goes through this actor, one at a time and in order, whichever of the run's
/// concurrent transfers asks (``SyncOptions/transfers``). Each write holds every change made
/// before it, and none made after: a kill after any write leaves a journal as a sequential run
/// would have written it, with more than one action in flight.
///
/// The run's local file operations (moves, the trash, putting a download in place, removing
/// emptied folders) run one at a time too, through ``local(_:)``, so two transfers never create
/// and remove the same folder at once.
actor RunJournal {
    private(set) var state: SyncState
    /// Results recorded in the journal since the last checkpoint.
    private var results: [SyncChange] = []
    private var stateWrites = 0
    /// Set once the test hook (``SyncOptions/afterStateWrite``) stopped the run at a write, as a
    /// kill would: nothing is written after it.
    private(set) var isKilled = false
    private let store: SyncStateStore
    private let afterStateWrite: (@Sendable (Int) throws -> Void)?
    /// A write in progress (the actor is reentrant across the store's `await`), and the changes
    /// waiting for it, first come first served.
    private var writing = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Held by a local file operation.
    private nonisolated let localOperations = Locked(())

    init(state: SyncState, store: SyncStateStore, afterStateWrite: (@Sendable (Int) throws -> Void)?) {
        self.state = state
        self.store = store
        self.afterStateWrite = afterStateWrite
    }

    /// Applies `change` to the state and writes it (the journal, or with `checkpoint` and every
    /// ``SyncStateStore/checkpointInterval`` results the whole state), after the writes asked for
    /// before it. Not cancellable: a change whose station call is done is recorded.
    func write(checkpoint: Bool = false, _ change: @Sendable (inout SyncState, inout [SyncChange]) -> Void) async throws(DriveSyncError) {
        await acquire()
        defer { release() }
        guard !isKilled else { throw DriveSyncError(.cancelled, "stopped after state write \(stateWrites)") }
        change(&state, &results)
        if checkpoint || results.count >= SyncStateStore.checkpointInterval {
            try await store.saveCheckpoint(state)
            results = []
        } else {
            try await store.saveJournal(pending: state.pending, results: results)
        }
        stateWrites += 1
        do {
            try afterStateWrite?(stateWrites)
        } catch {
            isKilled = true
            throw DriveSyncError(.cancelled, "stopped after state write \(stateWrites)", underlying: error)
        }
    }

    /// Changes the state without writing it: the next write records the change.
    func change(_ change: @Sendable (inout SyncState) -> Void) {
        change(&state)
    }

    /// Runs a local file operation of the run, one at a time with the others (they are short:
    /// renames, and the flush of a placed file).
    nonisolated func local<Value>(_ body: () throws(SyncPathRefusal) -> Value) throws(SyncPathRefusal) -> Value {
        let result: Result<Value, SyncPathRefusal> = localOperations.withLock { _ in
            do throws(SyncPathRefusal) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    private func acquire() async {
        guard writing else {
            writing = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            writing = false
        } else {
            // The write stays taken, handed to the next in line.
            waiting.removeFirst().resume()
        }
    }
}
