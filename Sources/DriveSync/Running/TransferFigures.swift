import Foundation
import Transport

/// The figures of a run's progress reports, with several actions in flight
/// (``SyncOptions/transfers``): the bytes of the actions finished plus those the actions in flight
/// have moved so far, and the action each report is about. Reports are made one at a time, in
/// the order of their figures, so `completedBytes` and `completedActions` never go back.
final class TransferFigures: Sendable {
    private struct Figures {
        var finishedActions = 0
        var finishedBytes: Int64 = 0
        /// The bytes each action in flight has moved, by its index in the run.
        var moving: [Int: Int64] = [:]
        /// The actions in flight, in the order they started.
        var started: [(index: Int, action: SyncAction)] = []
    }

    private let figures = Locked(Figures())
    private let totalActions: Int
    private let totalBytes: Int64
    private let start = ContinuousClock.now

    init(totalActions: Int, totalBytes: Int64) {
        self.totalActions = totalActions
        self.totalBytes = totalBytes
    }

    /// The bytes of the actions finished (done or failed).
    var finishedBytes: Int64 { figures.value.finishedBytes }

    /// Action `index` started: reported as the current action.
    func started(_ index: Int, _ action: SyncAction, report: (@Sendable (SyncProgress) -> Void)?) {
        figures.withLock { figures in
            figures.moving[index] = 0
            figures.started.append((index, action))
            report?(progress(figures, current: action))
        }
    }

    /// Action `index` moved bytes: `actionBytes` in all, `fileBytes` of the file it transfers now
    /// (of `fileByteCount`). Reported with it as the current action.
    func moved(_ index: Int, _ action: SyncAction, actionBytes: Int64, fileBytes: Int64, fileByteCount: Int64?,
               report: @Sendable (SyncProgress) -> Void) {
        figures.withLock { figures in
            // A report that comes after its action finished (a late callback) changes nothing.
            guard figures.moving[index] != nil else { return }
            figures.moving[index] = actionBytes
            report(progress(figures, current: action, fileBytes: fileBytes, fileByteCount: fileByteCount))
        }
    }

    /// Action `index` finished (done or failed): its bytes count in full. The current action is
    /// then the latest started of those still in flight (`nil` when none is).
    func finished(_ index: Int, _ action: SyncAction, report: (@Sendable (SyncProgress) -> Void)?) {
        figures.withLock { figures in
            figures.moving[index] = nil
            figures.started.removeAll { $0.index == index }
            figures.finishedActions += 1
            figures.finishedBytes = figures.finishedBytes.addingSaturated(action.byteCount)
            report?(progress(figures, current: figures.started.last?.action))
        }
    }

    private func progress(_ figures: Figures, current: SyncAction?, fileBytes: Int64 = 0, fileByteCount: Int64? = nil) -> SyncProgress {
        let moving = figures.moving.values.reduce(Int64(0)) { $0.addingSaturated($1) }
        return SyncProgress(completedActions: figures.finishedActions, totalActions: totalActions,
                            completedBytes: figures.finishedBytes.addingSaturated(moving), totalBytes: totalBytes,
                            currentAction: current, currentFileBytes: fileBytes, currentFileByteCount: fileByteCount,
                            elapsed: ContinuousClock.now - start)
    }
}
