import Foundation
import Manifest
import StationClient
import OrderedJSON
import ContentAddressing

/// One file as `ls`, `put`, `get` and `read` print it.
struct FileRow: Encodable {
    var postCID: String
    var envelopesCID: String?
    var audienceMode: String
    var filename: String?
    /// The file's full path on the drive (its folder and name, `/docs/notes.txt`): files of the
    /// same name in different folders are told apart by it.
    var path: String?
    var mimeType: String?
    var sizeBytes: Int?
    var createdAt: Int?
    var modifiedAt: Int?
    /// The plaintext's SHA-256 its metadata states (written by `cipher sync`).
    var sha256: String?
    var isPublic: Bool

    /// The names `Console.emit` turns into snake case, but for `public` (the station's word for it).
    enum CodingKeys: String, CodingKey {
        case postCID, envelopesCID, audienceMode, filename, path, mimeType, sizeBytes, createdAt, modifiedAt, sha256, isPublic = "public"
    }

    init(postCID: String, envelopesCID: String?, audienceMode: String, metadata: DriveFileMetadata?, createdAt: Int?, isPublic: Bool) {
        self.postCID = postCID
        self.envelopesCID = envelopesCID
        self.audienceMode = audienceMode
        filename = metadata?.filename
        path = metadata.map(DriveFiles.fullPath)
        mimeType = metadata?.mimeType
        sizeBytes = metadata?.sizeBytes
        self.createdAt = metadata?.createdAt ?? createdAt
        modifiedAt = metadata?.modifiedAt
        sha256 = metadata?.sha256
        self.isPublic = isPublic
    }

    /// Any namespace's post: its metadata read as drive metadata where it has a `filename` (the
    /// drive's one reader, so sizes, dates and digests are checked as `cipher get` and sync read them).
    init(_ post: ListedPost<JSONValue>) {
        let metadata = post.metadata.flatMap { try? DriveFileMetadata.read(jsonBytes: WireJSON.serialize($0)) }
        self.init(postCID: post.postCID, envelopesCID: post.envelopesCID, audienceMode: post.audienceMode.wireValue, metadata: metadata,
                  createdAt: post.metadata?.objectValue?["created_at"]?.intValue ?? post.createdAt, isPublic: post.isPublic)
    }

    init(_ post: ListedPost<DriveFileMetadata>) {
        self.init(postCID: post.postCID, envelopesCID: post.envelopesCID, audienceMode: post.audienceMode.wireValue, metadata: post.metadata,
                  createdAt: post.createdAt, isPublic: post.isPublic)
    }

    /// The row as `ls` and `read` print it (the station's strings escaped): the full path, as
    /// files of one name in different folders are common.
    var line: TerminalText {
        let size = sizeBytes.map { Format.bytes(Int64($0)) } ?? "-"
        let mode = audienceMode.padding(toLength: 8, withPad: " ", startingAt: 0)
        return "\(postCID)  \(mode) \(size.padding(toLength: 9, withPad: " ", startingAt: 0)) \(Format.date(createdAt))  \(path ?? "(no name)")"
    }
}

/// A post that could not be read, as listings report it.
struct SkippedRow: Encodable {
    var postCID: String
    var error: String
}

/// `cipher ls`.
enum ListCommand: Command {
    static let spec = CommandSpec(
        name: "ls", arguments: "[--namespace drive] [--manifest-order]", summary: "list the files (posts) of a namespace, newest first",
        options: [
            OptionSpec(names: ["--namespace"], help: "the manifest namespace to list (default: drive)", value: "NAME"),
            OptionSpec(names: ["--manifest-order"], help: "list in the manifest's order (oldest first) instead of by date, newest first"),
        ])

    /// The rows newest first: by their date (`created_at`), and where dates tie or are missing, by
    /// the manifest's order reversed (the station appends each post it publishes).
    static func newestFirst(_ listing: PostListing<JSONValue>) -> [FileRow] {
        let rows = listing.newestFirst.map(FileRow.init).enumerated()
        return rows.sorted { a, b in
            switch (a.element.createdAt, b.element.createdAt) {
            case let (x?, y?) where x != y: return x > y
            case (_?, nil): return true
            case (nil, _?): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
    }

    struct Output: Encodable {
        var namespace: String
        var manifestCID: String?
        var offline: Bool
        var posts: [FileRow]
        var skipped: [SkippedRow]
    }

    static func run(_ context: CommandContext) async throws {
        let namespace = context.arguments.value("--namespace") ?? DriveFiles.namespace
        let client = try await context.client(namespace: namespace)
        let listing = try await client.listPosts(as: JSONValue.self)
        let output = Output(namespace: namespace, manifestCID: listing.manifestCID, offline: listing.isOffline,
                            posts: context.arguments.has("--manifest-order") ? listing.posts.map(FileRow.init) : newestFirst(listing),
                            skipped: listing.skipped.map {
                                SkippedRow(postCID: $0.postCID, error: $0.error.description) })
        let console = context.console
        if listing.isOffline {
            console.note("station unreachable: showing the last listing read online")
        } else {
            await context.adoptIPNSKeyIfNew(client)
        }
        if output.posts.isEmpty { console.say("no files in \(namespace)") }
        for row in output.posts { console.say(row.line) }
        for skipped in output.skipped { console.note("skipped \(skipped.postCID): \(skipped.error)") }
        console.emit(output)
    }
}

/// `cipher put FILE`.
enum PutCommand: Command {
    static let spec = CommandSpec(
        name: "put", arguments: "FILE [--audience self|all|specific --to UID…] [--public] [--force]",
        summary: "encrypt and upload a file (only you can read it unless --audience says otherwise)",
        options: audienceOptions + [
            OptionSpec(names: ["--public"], help: "publish UNENCRYPTED and permanently, readable by anyone (asks first on a terminal)"),
            OptionSpec(names: ["--yes", "-y"], help: "do not ask for confirmation of --public"),
            OptionSpec(names: ["--force"], help: "upload even if a file of that name is already there (a second entry; asks on a terminal)"),
        ],
        positionals: 1...1)

    static func run(_ context: CommandContext) async throws {
        let arguments = context.arguments
        let console = context.console
        let file = URL(fileURLWithPath: arguments.positionals[0])
        let isPublic = arguments.has("--public")
        if isPublic, arguments.value("--audience") != nil || !arguments.all("--to").isEmpty {
            throw CLIError.usage("--public cannot be combined with --audience or --to")
        }
        let audience = try Audience.parse(arguments)
        let metadata = try DriveFiles.metadata(for: file)
        if isPublic && console.stdinIsTerminal && !arguments.has("--yes") {
            let answer = console.ask("\(metadata.filename) will be published UNENCRYPTED and can never be deleted. Continue? [y/N] ")
            guard let answer, ["y", "yes"].contains(answer.lowercased()) else { throw CLIError.failure("not published") }
        }
        let client = try await context.client()
        // A second upload of a name makes a second entry: only when asked for.
        if !arguments.has("--force") {
            let existing = try await client.listPosts(as: DriveFileMetadata.self).posts.filter { $0.metadata?.filename == metadata.filename }
            if !existing.isEmpty {
                let cids = existing.map(\.postCID).joined(separator: " ")
                guard console.stdinIsTerminal,
                      let answer = console.ask("\(metadata.filename) is already there (\(cids)). Upload a second copy? [y/N] "),
                      ["y", "yes"].contains(answer.lowercased()) else {
                    throw CLIError.failure("\(metadata.filename) is already there (\(cids)); add --force to upload a second copy")
                }
            }
        }
        let published: PublishedPost
        if isPublic {
            let data: Data
            do { data = try Data(contentsOf: file) } catch { throw CLIError.failure("cannot read \(file.path): \(error.localizedDescription)") }
            published = try await client.publishPermanentlyPublic(data: data, metadata: metadata)
        } else {
            published = try await client.publish(fileAt: file, metadata: metadata, audience: audience,
                                                  progress: console.progress("uploading \(metadata.filename)"))
            console.finishProgress()
        }
        let row = FileRow(postCID: published.postCID, envelopesCID: published.envelopesCID, audienceMode: published.audienceMode.wireValue,
                          metadata: metadata, createdAt: metadata.createdAt, isPublic: isPublic)
        console.say("uploaded \(metadata.filename) (\(Format.bytes(Int64(metadata.sizeBytes ?? 0))), \(row.audienceMode)) as \(published.postCID)")
        console.emit(row)
    }
}

/// `cipher get CID|NAME`.
enum GetCommand: Command {
    static let spec = CommandSpec(
        name: "get", arguments: "CID|NAME [-o FILE] [--force]", summary: "download and decrypt a file (NAME matches the filename exactly)",
        options: [OptionSpec(names: ["--output", "-o"], help: "where to write it (default: its filename here; - for standard output)",
                             value: "FILE"),
                  OptionSpec(names: ["--force"], help: "replace the file if it exists (it is replaced only once the download verified)")],
        positionals: 1...1)

    static func run(_ context: CommandContext) async throws {
        let client = try await context.client()
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        let post = try DriveFiles.find(context.arguments.positionals[0], in: listing)
        let saved = try await DriveFiles.save(post, context: context) {
            post.isPublic ? try await client.downloadPublic(postCID: post.postCID)
                : try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID)
        } toFile: { destination, progress in
            // The metadata's size bounds what the station or gateway may write to disk.
            let known = post.metadata?.sizeBytes.map { Int64($0) }
            if post.isPublic {
                try await client.downloadPublic(postCID: post.postCID, to: destination, size: known, progress: progress)
            } else {
                try await client.download(postCID: post.postCID, envelopesCID: post.envelopesCID, to: destination,
                                          plaintextSize: known, progress: progress)
            }
        }
        context.console.emit(saved)
    }
}

/// `cipher share CID|NAME --audience …`: publishes the file anew to the new audience, then
/// removes the old entry (the station's in-place share would destroy the file's bytes).
enum ShareCommand: Command {
    static let spec = CommandSpec(
        name: "share", arguments: "CID|NAME --audience self|all|specific [--to UID…]",
        summary: "give a file a new audience (published anew under a fresh key; the old entry is removed)",
        options: audienceOptions, positionals: 1...1)

    struct Output: Encodable {
        var postCID: String
        var previousPostCID: String
        var envelopesCID: String?
        var audienceMode: String
        var previousEntryRemoved: Bool
    }

    static func run(_ context: CommandContext) async throws {
        let audience = try Audience.parse(context.arguments, default: nil)
        let client = try await context.client()
        let post = try DriveFiles.find(context.arguments.positionals[0], in: try await client.listPosts(as: DriveFileMetadata.self))
        let name = post.metadata?.filename ?? post.postCID
        let result = try await client.reshare(postCID: post.postCID, audience: audience)
        let output = Output(postCID: result.post.postCID, previousPostCID: post.postCID, envelopesCID: result.post.envelopesCID,
                            audienceMode: result.post.audienceMode.wireValue, previousEntryRemoved: result.previousEntryRemoved)
        context.console.say("\(name) is now shared with: \(output.audienceMode)")
        if result.previousEntryRemoved {
            context.console.say("published anew as \(result.post.postCID) under a fresh key; the old entry \(post.postCID) was removed")
        } else {
            context.console.say("published anew as \(result.post.postCID) under a fresh key")
            context.console.note("warning: the old entry \(post.postCID) could not be removed; remove it with: cipher rm \(post.postCID)")
        }
        context.console.emit(output)
    }
}

/// `cipher rm CID|NAME`.
enum RemoveCommand: Command {
    static let spec = CommandSpec(
        name: "rm", arguments: "CID|NAME", summary: "remove a file from the manifest (copies already fetched stay fetched)",
        positionals: 1...1)

    struct Output: Encodable {
        var postCID: String
        var removed: Bool
    }

    static func run(_ context: CommandContext) async throws {
        let client = try await context.client()
        let post = try DriveFiles.find(context.arguments.positionals[0], in: try await client.listPosts(as: DriveFileMetadata.self))
        _ = try await client.delete(postCID: post.postCID)
        context.console.say("removed \(post.metadata?.filename ?? post.postCID) (\(post.postCID))")
        context.console.emit(Output(postCID: post.postCID, removed: true))
    }
}
