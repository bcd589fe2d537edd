import DriveSync
import Foundation
import StationClient

/// `cipher sync DIR --watch`: syncs, then again whenever the folder or the station changes
/// (``DriveSync/watch(options:progress:onRun:)``), until SIGINT or SIGTERM; each run prints what
/// a `cipher sync` prints. The signal stops the run in flight as it stops a `cipher sync` (what
/// was done is recorded; the next sync resumes), and the command exits 0.
enum SyncWatch {
    /// The flags only `--watch` takes.
    static let options = [
        OptionSpec(names: ["--watch"], help: "keep syncing: again whenever DIR or the station changes, until Ctrl-C or SIGTERM (exit 0)"),
        OptionSpec(names: ["--debounce"], help: "with --watch: sync once DIR has been quiet this long (default 2)", value: "SECONDS"),
        OptionSpec(names: ["--poll"], help: "with --watch: check the station for other devices' changes this often (default 30)",
                   value: "SECONDS"),
    ]

    /// One run under `--json`: a line of its own.
    struct RunOutput: Encodable {
        var run: Int
        var trigger: String
        var plan: SyncCommand.PlanOutput?
        var completed: [SyncCommand.ActionRow]
        var failures: [SyncCommand.FailureRow]
        var heldDeletions: [SyncCommand.ActionRow]
        var error: String?
        var retryInSeconds: Double?
    }

    /// The watch options the command line asks for; `nil` without `--watch`.
    static func watchOptions(_ arguments: ParsedArguments) throws -> WatchOptions? {
        guard arguments.has("--watch") else {
            for name in ["--debounce", "--poll"] where arguments.value(name) != nil { throw CLIError.usage("\(name) goes with --watch") }
            return nil
        }
        guard !arguments.has("--dry-run") else { throw CLIError.usage("--watch syncs: it does not go with --dry-run") }
        var options = WatchOptions()
        if let debounce = try seconds(arguments, "--debounce", minimum: 0) { options.debounce = debounce }
        if let poll = try seconds(arguments, "--poll", minimum: 0.1) { options.stationPollInterval = poll }
        return options
    }

    /// `name`'s value in seconds (a decimal number, at least `minimum`, at most a day).
    static func seconds(_ arguments: ParsedArguments, _ name: String, minimum: Double) throws -> Duration? {
        guard let text = arguments.value(name) else { return nil }
        guard let value = Double(text), value.isFinite, value >= minimum, value <= 86_400 else {
            throw CLIError.usage("\(name) takes a number of seconds (\(minimum == 0 ? "0" : String(minimum)) to 86400)")
        }
        return .milliseconds(Int64(value * 1000))
    }

    /// Watches until the task is cancelled, then ends with exit 0 (``StoppedOnRequest``).
    static func run(_ context: CommandContext, sync: DriveSync, options: WatchOptions) async throws {
        let console = context.console
        let poll = options.stationPollInterval.map { "every \(Format.duration($0))" } ?? "never"
        console.note("""
            watching \(sync.folder.path) (debounce \(Format.duration(options.debounce)), station checked \(poll)); \
            Ctrl-C or SIGTERM stops
            """)
        let line = console.json ? nil : SyncProgressLine(console: console)
        var progress: (@Sendable (SyncProgress) -> Void)?
        if let line { progress = { line.update($0) } }
        let reporting = progress
        try await SyncCommand.driveSync {
            try await sync.watch(options: options, progress: reporting) { run in
                if run.plan?.actions.isEmpty == false { line?.finish() }
                show(run, console: console, folder: sync.folder)
            }
        }
        console.note("stopped watching \(sync.folder.path)")
        throw StoppedOnRequest()
    }

    /// A run as `cipher sync` shows it: the plan, then the outcome line.
    static func show(_ run: WatchRun, console: Console, folder: URL) {
        let retry = run.retryDelay.map { "; trying again in \(Format.duration($0))" } ?? ""
        console.emit(RunOutput(run: run.number, trigger: run.trigger.description, plan: run.plan.map(SyncCommand.planOutput),
                               completed: run.report?.completed.map(SyncCommand.ActionRow.init) ?? [],
                               failures: run.report?.failures.map {
                                   SyncCommand.FailureRow(action: $0.action.description, path: $0.path, message: $0.message)
                               } ?? [],
                               heldDeletions: run.report?.heldDeletions.map(SyncCommand.ActionRow.init) ?? [],
                               error: run.error?.description, retryInSeconds: run.retryDelay?.inSeconds))
        let when = Date().formatted(date: .omitted, time: .standard)
        console.say("— \(when) run \(run.number) (\(run.trigger))")
        guard let plan = run.plan else {
            console.note("sync failed: \(run.error?.message ?? "unknown error")\(retry)")
            return
        }
        SyncCommand.show(plan, console: console, folder: folder)
        guard let report = run.report else {
            console.note("sync failed: \(run.error?.message ?? "unknown error")\(retry)")
            return
        }
        for failure in report.failures { console.note("failed: \(failure.action) \(failure.path): \(failure.message)") }
        for action in report.heldDeletions { console.note("held back: \(action.kind) \(action.path) (\(action.reason))") }
        if !report.heldDeletions.isEmpty {
            console.note("""
                held back \(report.heldDeletions.count) deletions, more than the limit of \(plan.deletionLimit); every run holds them \
                until a `cipher sync \(folder.path) --max-delete \(report.heldDeletions.count)` lets them through
                """)
        }
        let failed = report.failures.isEmpty ? "" : "; \(report.failures.count) failed\(retry)"
        let took = String(format: "%.1f s", report.duration.inSeconds)
        console.say("done: \(report.completed.count) of \(plan.actions.count) actions, \(Format.bytes(report.byteCount)) in \(took)\(trusted: failed)")
        if report.isInSync && plan.skipped.isEmpty { console.say("in sync") }
    }
}

/// A command that ended because SIGINT or SIGTERM asked it to, having finished cleanly
/// (`cipher sync --watch`): the process exits 0, not 128 + the signal.
struct StoppedOnRequest: Error {}
