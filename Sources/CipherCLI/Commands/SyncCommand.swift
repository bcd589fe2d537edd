import DriveSync
import Foundation
import OrderedJSON
import StationClient
import Transport

/// `cipher sync DIR`: two-way sync of a folder with the `drive` namespace (see DriveSync).
enum SyncCommand: Command {
    static let spec = CommandSpec(
        name: "sync", arguments: "DIR [--dry-run] [--max-delete N] [--wait] [--transfers N] [--trash-days DAYS] [--watch [--debounce SECONDS] [--poll SECONDS]] "
            + "| DIR --status | DIR --forget | DIR --empty-trash [--older-than DAYS]",
        summary: "keep a folder and the drive in step, both ways (plan first; conflicts kept as copies; deletions to DIR/.cipher-sync/trash)",
        options: [
            OptionSpec(names: ["--dry-run", "-n"], help: "show the plan and change nothing"),
            OptionSpec(names: ["--max-delete"], help: "allow up to N deletions (default: half the most files DIR had in sync)", value: "N"),
            OptionSpec(names: ["--yes", "-y"],
                       help: "let through the deletions the printed plan lists, over the deletion limit, without asking, on a terminal or not (scripts); "
                           + "without it a terminal asks, else they are held back (exit 6)"),
            OptionSpec(names: ["--wait"], help: "wait for another sync of DIR to finish (otherwise exit 7 at once)"),
            OptionSpec(names: ["--trash-days"],
                       help: "keep what syncs move to the trash DAYS days (default 30), removed at the start of a later sync; 0 keeps only the last sync's",
                       value: "DAYS"),
            OptionSpec(names: ["--status"], help: "show DIR's last sync, files tracked, held deletions, what waits for you and the trash, then exit"),
            OptionSpec(names: ["--forget"],
                       help: "forget DIR's sync state (post keys and other caches stay): the next sync compares both sides afresh, deleting nothing"),
            OptionSpec(names: ["--transfers"], help: "move up to N files at a time, 1 to 16 (default 4)", value: "N"),
            OptionSpec(names: ["--empty-trash"], help: "empty DIR's sync trash instead of syncing (what syncs moved there), then exit"),
            OptionSpec(names: ["--older-than"], help: "with --empty-trash: only what syncs more than DAYS days ago trashed", value: "DAYS"),
        ] + SyncWatch.options,
        positionals: 1...1)

    /// One action as the plan and the outcome print it.
    struct ActionRow: Encodable {
        var action: String
        var path: String
        var sizeBytes: Int64
        var conflictCopy: String?
        var reason: String

        init(_ action: SyncAction) {
            self.action = action.kind.description
            path = action.path
            sizeBytes = action.byteCount
            conflictCopy = action.conflictCopyPath
            reason = action.reason
        }
    }

    struct SkippedRow: Encodable {
        var path: String
        var side: String
        var reason: String
        var message: String
        init(_ item: SkippedItem) {
            path = item.path
            side = item.isRemote ? "station" : "local"
            reason = item.reason.kind
            message = item.reason.description
        }
    }

    struct FailureRow: Encodable {
        var action: String
        var path: String
        var message: String
    }

    struct PlanOutput: Encodable {
        var actions: [ActionRow]
        var skipped: [SkippedRow]
        var uploadBytes: Int64
        var downloadBytes: Int64
        var deletions: Int
        var deletionLimit: Int
        var resumedActions: Int
    }

    struct OutcomeOutput: Encodable {
        var completed: [ActionRow]
        var failures: [FailureRow]
        var heldDeletions: [ActionRow]
        var bytes: Int64
        var seconds: Double
    }

    struct Output: Encodable {
        var folder: String
        var namespace: String
        var dryRun: Bool
        var plan: PlanOutput
        var outcome: OutcomeOutput?
        var inSync: Bool
        var waitingForDecision: Bool
        var exitCode: Int32
    }

    /// What `--empty-trash` prints with `--json`.
    struct TrashOutput: Encodable {
        var folder: String
        var removedFiles: Int
        var removedBytes: Int64
        var removedFolders: Int
        var notRemoved: Int
    }

    static func run(_ context: CommandContext) async throws {
        let arguments = context.arguments
        let console = context.console
        // Conflict copies carry the name this device was paired with (`cipher pair --name`).
        var options = SyncOptions(deviceName: try context.home.loadSettings().deviceName)
        options.waitsForOtherSyncs = arguments.has("--wait")
        if arguments.has("--empty-trash") || arguments.value("--older-than") != nil {
            try await emptyTrash(context, options: options)
            return
        }
        if arguments.has("--status") { return try await status(context, options: options) }
        if arguments.has("--forget") { return try await forget(context, options: options) }
        if let text = arguments.value("--trash-days") {
            guard let days = Int(text), days >= 0, days <= 100_000 else { throw CLIError.usage("--trash-days takes a number of days (0 or more)") }
            options.trashRetention = .seconds(Int64(days) * 86_400)
        }
        if let text = arguments.value("--max-delete") {
            guard let limit = Int(text), limit >= 0 else { throw CLIError.usage("--max-delete takes a number of files (0 or more)") }
            options.maximumDeletions = limit
        }
        if let text = arguments.value("--transfers") {
            guard let count = Int(text), (1...16).contains(count) else { throw CLIError.usage("--transfers takes a number from 1 to 16") }
            options.transfers = count
        }
        let watch = try SyncWatch.watchOptions(arguments)
        let sync = try await folderSync(context, options: options)
        let client = sync.client
        if let watch { return try await SyncWatch.run(context, sync: sync, options: watch) }
        // Planning reads the whole folder and listing (half a minute on a new device): say so on a terminal.
        let line = console.json ? nil : SyncProgressLine(console: console)
        line?.planning("scanning \(sync.folder.path) and listing the station…")
        let plan = try await driveSync { try await sync.plan() }
        line?.planned(plan)
        show(plan, console: console, folder: sync.folder)

        var output = Output(folder: sync.folder.path, namespace: client.configuration.namespace, dryRun: arguments.has("--dry-run"),
                            plan: planOutput(plan), outcome: nil, inSync: false, waitingForDecision: false, exitCode: 0)
        // The deletions the user let through: exactly those of the plan printed above, which runs
        // as it is (no new plan that could hold others).
        var approved: [SyncAction] = []
        if plan.exceedsDeletionLimit {
            let question: TerminalText = "The sync would delete \(plan.deletionCount) files (limit \(plan.deletionLimit)). Go on? [y/N] "
            // --yes goes on; otherwise only a person at a terminal can say so (never under --json).
            let allowed = !output.dryRun && (arguments.has("--yes") || (!console.json && console.stdinIsTerminal
                && ["y", "yes"].contains(console.ask(question)?.lowercased() ?? "")))
            if allowed { approved = plan.deletions }
        }
        if plan.exceedsDeletionLimit && output.dryRun {
            console.note("""
                the sync would delete \(plan.deletionCount) files, more than the limit of \(plan.deletionLimit): a run would hold them \
                back and do the rest. If these deletions are meant, run again with --max-delete \(plan.deletionCount)
                """)
            output.waitingForDecision = true
            output.exitCode = ExitCode.waitingForDecision.rawValue
            console.emit(output)
            throw Finished(code: .waitingForDecision)
        }
        if output.dryRun {
            console.say(plan.isInSync ? "in sync: nothing to do" : "dry run: nothing was changed")
            output.inSync = plan.isInSync && plan.skipped.isEmpty
            let code = exitCode(failures: 0, skipped: plan.skipped.count)
            output.exitCode = code.rawValue
            console.emit(output)
            if code != .success { throw Finished(code: code) }
            return
        }
        var progress: (@Sendable (SyncProgress) -> Void)?
        if let line { progress = { line.update($0) } }
        let (runner, runPlan) = (sync, plan)
        let report = try await driveSync { try await runner.run(runPlan, approvingDeletions: approved, progress: progress) }
        line?.finish()

        for failure in report.failures { console.note("failed: \(failure.action) \(failure.path): \(failure.message)") }
        if !report.heldDeletions.isEmpty {
            // Over the limit only the deletions wait: everything else above was done.
            for action in report.heldDeletions { console.note("held back: \(action.kind) \(action.path) (\(action.reason))") }
            console.note("""
                held back \(report.heldDeletions.count) deletions, more than the limit of \(plan.deletionLimit); everything else was synced. \
                If these deletions are meant, run again on a terminal and answer y, or with --yes: the plan it prints runs as it is, \
                its listed deletions and no others (or --max-delete \(report.heldDeletions.count) raises the limit)
                """)
            output.waitingForDecision = true
        }
        let seconds = report.duration.inSeconds
        var failed = report.failures.isEmpty ? "" : "; \(report.failures.count) failed (the next sync tries again)"
        if !plan.skipped.isEmpty { failed += "; \(plan.skipped.count) skipped (not synced until you act on them)" }
        let took = String(format: "%.1f s", seconds)
        console.say("done: \(report.completed.count) of \(plan.actions.count) actions, \(Format.bytes(report.byteCount)) in \(took)\(trusted: failed)")
        output.outcome = OutcomeOutput(completed: report.completed.map(ActionRow.init), failures: report.failures.map {
            FailureRow(action: $0.action.description, path: $0.path, message: $0.message)
        }, heldDeletions: report.heldDeletions.map(ActionRow.init), bytes: report.byteCount, seconds: seconds)
        output.inSync = report.isInSync && plan.skipped.isEmpty
        let code = exitCode(failures: report.failures.count, held: report.heldDeletions.count, skipped: plan.skipped.count)
        output.exitCode = code.rawValue
        if output.inSync { console.say("in sync") }
        console.emit(output)
        if code != .success { throw Finished(code: code) }
    }

    /// A finished sync's exit code: failures (5) win over deletions held back by the limit (6),
    /// which win over skipped items (8): retrying may clear the failures, `--max-delete` lets the
    /// deletions through, and the skipped items wait for the user either way.
    static func exitCode(failures: Int, held: Int = 0, skipped: Int) -> ExitCode {
        if failures > 0 { return .incomplete }
        if held > 0 { return .waitingForDecision }
        return skipped > 0 ? .needsAttention : .success
    }

    /// `--empty-trash [--older-than DAYS]`: empties the trash, prints what went.
    static func emptyTrash(_ context: CommandContext, options: SyncOptions) async throws {
        let (arguments, console) = (context.arguments, context.console)
        guard arguments.has("--empty-trash") else { throw CLIError.usage("--older-than goes with --empty-trash") }
        var cutoff: Date?
        if let text = arguments.value("--older-than") {
            guard let days = Double(text), days.isFinite, days >= 0, days <= 100_000 else {
                throw CLIError.usage("--older-than takes a number of days (0 or more)")
            }
            cutoff = Date(timeIntervalSinceNow: -days * 86_400)
        }
        let sync = try await folderSync(context, options: options)
        let emptied = try await driveSync { try await sync.emptyTrash(olderThan: cutoff) }
        console.say("removed \(emptied.fileCount) files (\(Format.bytes(emptied.byteCount))) in \(emptied.folderCount) trash folders of \(sync.folder.path)")
        if emptied.failedCount > 0 { console.note("\(emptied.failedCount) entries in the trash could not be removed; they are left") }
        console.emit(TrashOutput(folder: sync.folder.path, removedFiles: emptied.fileCount, removedBytes: emptied.byteCount,
                                 removedFolders: emptied.folderCount, notRemoved: emptied.failedCount))
    }

    /// What `--status` prints with `--json`.
    struct StatusOutput: Encodable {
        var folder: String
        var lastSync: String?
        var lastSyncCompleted: Int?
        var lastSyncFailed: Int?
        var lastSyncBytes: Int64?
        var trackedFiles: Int
        var highWaterMark: Int
        var interruptedActions: Int
        var heldDeletions: [String]
        var heldDeletionCount: Int
        var skipped: [SkippedRow]
        var skippedCount: Int
        var trashFiles: Int
        var trashBytes: Int64
    }

    /// `--status`: the folder's sync state as the last run left it, and the trash.
    static func status(_ context: CommandContext, options: SyncOptions) async throws {
        let console = context.console
        let sync = try await folderSync(context, options: options)
        let status = try await driveSync { try await sync.status() }
        let last = status.lastRun
        console.say("folder: \(TerminalText.escapingControlCharacters(in: sync.folder.path))")
        if let last {
            let failed = last.failureCount > 0 ? ", \(last.failureCount) failed" : ""
            console.say("last sync: \(RFC3339.string(last.date)): \(last.completedActionCount) actions done\(failed), \(Format.bytes(last.byteCount))")
        } else {
            console.say("last sync: never (or forgotten)")
        }
        console.say("files tracked: \(status.trackedFileCount) (the most in sync: \(status.highWaterMark))")
        if status.interruptedActionCount > 0 {
            console.say("interrupted: \(status.interruptedActionCount) journalled actions (the next sync resolves them)")
        }
        if let last, last.heldDeletionCount > 0 {
            console.say("held deletions: \(last.heldDeletionCount) (run cipher sync again and answer y, or --yes, to let them through)")
            for path in last.heldDeletions { console.say("  \(TerminalText.escapingControlCharacters(in: path))") }
        }
        if let last, last.skippedCount > 0 {
            console.say("waiting for you: \(last.skippedCount) skipped")
            for item in last.skipped { console.say("  \(TerminalText.escapingControlCharacters(in: item.description))") }
        }
        console.say("trash: \(status.trashFileCount) files, \(Format.bytes(status.trashByteCount)) (cipher sync DIR --empty-trash empties it)")
        console.emit(StatusOutput(folder: sync.folder.path, lastSync: last.map { RFC3339.string($0.date) }, lastSyncCompleted: last?.completedActionCount,
                                  lastSyncFailed: last?.failureCount, lastSyncBytes: last?.byteCount, trackedFiles: status.trackedFileCount,
                                  highWaterMark: status.highWaterMark, interruptedActions: status.interruptedActionCount,
                                  heldDeletions: last?.heldDeletions ?? [], heldDeletionCount: last?.heldDeletionCount ?? 0,
                                  skipped: last?.skipped.map(SkippedRow.init) ?? [], skippedCount: last?.skippedCount ?? 0,
                                  trashFiles: status.trashFileCount, trashBytes: status.trashByteCount))
    }

    /// `--forget`: removes the folder's sync state only.
    static func forget(_ context: CommandContext, options: SyncOptions) async throws {
        let console = context.console
        let sync = try await folderSync(context, options: options)
        try await driveSync { try await sync.forgetState() }
        console.say("""
            forgot the sync state of \(TerminalText.escapingControlCharacters(in: sync.folder.path)) (post keys and other caches kept): \
            the next sync compares both sides afresh and deletes nothing
            """)
        console.emit(["folder": sync.folder.path, "forgotten": "sync state"])
    }

    /// The sync of the command's DIR with the paired client.
    static func folderSync(_ context: CommandContext, options: SyncOptions) async throws -> DriveSync {
        DriveSync(client: try await context.client(), folder: URL(fileURLWithPath: context.arguments.positionals[0]), options: options)
    }

    /// Runs a DriveSync call; a station's error keeps its kind (and so its exit code).
    static func driveSync<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as DriveSyncError {
            if error.kind == .busy { throw CLIError.busy(error.message + " (exit 7; --wait waits for it)") }
            if let underlying = error.underlying as? StationClientError { throw CLIError.client(underlying) }
            throw CLIError.failure(error.message)
        }
    }

    static func planOutput(_ plan: SyncPlan) -> PlanOutput {
        PlanOutput(actions: plan.actions.map(ActionRow.init), skipped: plan.skipped.map(SkippedRow.init), uploadBytes: plan.uploadByteCount,
                   downloadBytes: plan.downloadByteCount, deletions: plan.deletionCount, deletionLimit: plan.deletionLimit,
                   resumedActions: plan.resumedActionCount)
    }

    /// The SIZE cell of a plan row: the bytes an action transfers, or for a deletion (which
    /// transfers none) the size it removes (`SyncAction.removedByteCount`), "—" when unknown.
    static func size(of action: SyncAction) -> String {
        guard action.byteCount == 0, action.kind == .deleteLocal || action.kind == .deleteRemote else { return Format.bytes(action.byteCount) }
        return action.removedByteCount.map(Format.bytes) ?? "—"
    }

    /// The plan as a table, a summary line, and what is skipped.
    static func show(_ plan: SyncPlan, console: Console, folder: URL) {
        if plan.resumedActionCount > 0 { console.say("resuming an interrupted sync (\(plan.resumedActionCount) journalled actions resolved)") }
        let rows = plan.actions.map { action in
            [action.kind.description, size(of: action),
             TerminalText.escapingControlCharacters(in: action.path + (action.conflictCopyPath.map { " → \($0)" } ?? "")), action.reason]
        }
        console.sayTable(["ACTION", "SIZE", "PATH", "WHY"], rows)
        let count = { (kind: SyncAction.Kind) in plan.actions.filter { $0.kind == kind }.count }
        let skipped = plan.skipped.isEmpty ? "" : ", \(plan.skipped.count) skipped"
        console.say("""
            plan: \(count(.upload)) uploads (\(Format.bytes(plan.uploadByteCount))), \(count(.download)) downloads \
            (\(Format.bytes(plan.downloadByteCount))), \(plan.deletionCount) deletions, \(count(.conflict) + count(.duplicate)) conflicts\(trusted: skipped)
            """)
        for item in plan.skipped { console.note("skipped \(item.isRemote ? "station file" : "local file") \(item.path): \(item.reason.description)") }
        if !plan.skipped.isEmpty { console.note("skipped items are not synced until you act on them (exit 8 unless something fails)") }
    }
}

/// The end of a command whose outcome is already printed, with its exit code.
struct Finished: Error {
    var code: ExitCode
}

/// A sync's planning and progress on standard error on a terminal: what planning does, then
/// actions, bytes, throughput and the time left for the whole run, redrawn at most every 1 %, on a
/// new file or on a finished action.
final class SyncProgressLine: Sendable {
    private let console: Console
    private let last = Locked((permille: -1, path: String?.none, actions: -1))
    private let planningStarted = Locked(ContinuousClock.now)

    init?(console: Console) {
        guard console.stderrIsTerminal else { return nil }
        self.console = console
    }

    /// Before planning: what it does (DriveSync reports no progress while it plans).
    func planning(_ what: TerminalText) {
        planningStarted.withLock { $0 = .now }
        console.note("planning: \(trusted: what.rendered)")
    }

    /// After planning: how long it took and what it found.
    func planned(_ plan: SyncPlan) {
        let took = String(format: "%.1f s", (ContinuousClock.now - planningStarted.withLock { $0 }).inSeconds)
        console.note("planned in \(took): \(plan.actions.count) actions, \(plan.skipped.count) skipped")
    }

    func update(_ progress: SyncProgress) {
        let permille = progress.totalBytes > 0 ? Int(min(1000, progress.completedBytes * 1000 / progress.totalBytes)) : 0
        // A finished action redraws too: deletions and small files move no bytes, and the time left
        // (counted in actions as well as bytes) would otherwise stay as it was at the last byte.
        let redraw = last.withLock { last -> Bool in
            guard permille / 10 != last.permille / 10 || progress.currentPath != last.path
                || progress.completedActions != last.actions else { return false }
            last = (permille, progress.currentPath, progress.completedActions)
            return true
        }
        guard redraw else { return }
        var text = "\rsyncing \(progress.completedActions)/\(progress.totalActions) · \(Format.bytes(progress.completedBytes))"
            + "/\(Format.bytes(progress.totalBytes))"
        if let rate = progress.bytesPerSecond { text += " · \(Format.bytes(Int64(rate)))/s" }
        if let left = progress.estimatedTimeRemaining { text += " · \(Format.duration(left)) left" }
        if let action = progress.currentAction {
            // "upload a.txt 1.2 MB/3 MB": the action, and how far into its file.
            text += " · \(action.kind) " + TerminalText.escapingControlCharacters(in: action.path)
            if let size = progress.currentFileByteCount, size > 0 {
                text += " \(Format.bytes(progress.currentFileBytes))/\(Format.bytes(size))"
            }
        } else if let path = progress.currentPath {
            text += " · " + TerminalText.escapingControlCharacters(in: path)
        }
        FileHandle.standardError.write(Data((text + "\u{1b}[K").utf8))
    }

    func finish() { FileHandle.standardError.write(Data("\n".utf8)) }
}
