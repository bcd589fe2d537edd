// The examples are one executable, started by these tests: iOS, tvOS, watchOS and visionOS start no
// programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Manifest
import StationEmulator
import TestSupport
import Testing
import TransportTestSupport

/// One run of an example.
struct ExampleRun: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Builds (through the test target's dependencies) and runs every example, checking its output,
/// like swift-argument-parser's example tests.
@Suite("Examples")
struct ExampleTests {
    /// Runs the step `product` of `cipher-examples` (none: the tool alone) with `arguments`. With `pinsFrom`, each pairing PIN that station
    /// logs is typed on the example's standard input, as a user reading the station's log would.
    static func launch(_ product: String?, _ arguments: [String] = [], pinsFrom log: StationLog? = nil) async throws -> ExampleRun {
        signal(SIGPIPE, SIG_IGN)  // a write to an example that just ended fails instead of killing the tests
        let launched = try PipedProcess(PipedProcess.productsDirectory.appendingPathComponent("cipher-examples"),
                                        (product.map { [$0] } ?? []) + arguments)
        let out = PipeReader(launched.stdout), err = PipeReader(launched.stderr)
        if let log {
            var typed = 0
            while launched.process.isRunning {
                let pins = log.pins
                for pin in pins.dropFirst(typed) {
                    try? launched.stdin.fileHandleForWriting.write(contentsOf: Data((pin + "\n").utf8))
                }
                typed = pins.count
                try? await Task.sleep(nanoseconds: 20_000_000)
            }
        }
        try? launched.stdin.fileHandleForWriting.close()
        let stdout = await out.result(), stderr = await err.result()
        launched.process.waitUntilExit()
        return ExampleRun(status: launched.process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                          stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Expects each of `lines` in `output`, each a check of its own.
    static func expect(_ output: String, toContain lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for line in lines { #expect(output.contains(line), "missing: \(line)", sourceLocation: sourceLocation) }
    }

    /// An example, lines its run prints, and any checks of its output the lines do not make.
    struct Example: Sendable, CustomTestStringConvertible {
        var product: String
        var lines: [String]
        var alsoCheck: @Sendable (String) -> Void = { _ in }
        var testDescription: String { product }
    }

    /// Every example as it runs by default: the step examples against an embedded StationEmulator
    /// (no --station argument).
    static let steps: [Example] = [
        Example(product: "post-quantum-tour", lines: [
            "ML-KEM-768: public key 1184 B, ciphertext 1088 B, shared secrets match: true",
            "reloaded 2400-byte key decapsulates too: true",
            // SHA3-256("cipher station"), computed independently with Python's hashlib.
            "f36dbec02a696b1acdde0b0a9d2fe173c485b396cb0c8e4bba0e11e66abe8a3d",
        ]),
        Example(product: "pair-device", lines: [
            "ML-KEM-768 public key: 1184 B",
            "ML-DSA-65 public key: 1952 B",
            "reloaded from the key store: true",
            "signed call accepted, followers: 0",
        ]) { output in
            #expect(output.range(of: #"paired device uid: examplelaptop-[0-9a-f]{8}\n"#, options: .regularExpression) != nil)
        },
        Example(product: "sign-request", lines: [
            "canonical string fields: 7",
            // SHA-256 of the empty body, the value every GET signs.
            "body sha256 (empty body): e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "GET /followers, signed for /followers: HTTP 200",
            "GET /followers, signed for /following: HTTP 401",
        ] + ["x-cipher-uid", "x-cipher-device", "x-cipher-ts", "x-cipher-nonce", "x-cipher-body-sha256", "x-cipher-sig"].map { "  \($0): " }),
        Example(product: "read-manifest", lines: [
            "namespaces: drive\n",
            "decrypted: report.pdf",
            "decrypted: holiday.jpg",
            "posts: 2, skipped: 0",
            "streamed: report.pdf\nstreamed: holiday.jpg\n",
            "storage: drive has 2 posts",
            "removed: post holiday.jpg\nremoved: post report.pdf\n",
        ]) { output in
            #expect(output.range(of: #"manifest CID: Qm[1-9A-HJ-NP-Za-km-z]{44}"#, options: .regularExpression) != nil)
            #expect(output.components(separatedBy: "audience self, envelopes Qm").count == 3)
        },
        Example(product: "open-envelope", lines: [
            // 2 + 1088 + 16 + 32 + 24 (nonce) bytes.
            "envelope: 1162 B, ML-KEM ciphertext length prefix 1088",
            "post key recovered: 32 B",
            #"metadata: {"filename":"secret.txt","mime_type":"text/plain","size_bytes":11}"#,
            "content: hello world",
        ]),
        Example(product: "publish-post", lines: ["self", "specific", "all"].map { "published \($0): envelopes yes" } + [
            "published public: envelopes none",
            "large post uploaded: all bytes",
            "profile: Publisher, posts things",
            "the follower reads: for-followers.txt, for-friend.txt, hello-world.txt\n",
            "reshared diary.txt to all as a new post (old entry removed: true)",
            "the follower now reads: diary.txt, for-followers.txt, for-friend.txt, hello-world.txt\n",
            "the owner still downloads it: true",
        ]),
        Example(product: "two-clients", lines: [
            "manifest namespace drive: 1 posts",
            "manifest namespace notes: 2 posts",
            "file app sees: taxes.pdf\n",
            "notes app sees: Shopping, Todo\n",
        ]),
        Example(product: "read-followed", lines: [
            "follow request: follow_request_pending_multi_device",
            "pending: true",
            "news.txt: shared with followers",
            "saved to a file: 21 bytes",
            "readable posts: 1 of 2",
        ]) { output in
            #expect(!output.contains("mine only"))  // the self post is not readable by the follower
        },
        Example(product: "sync-folder", lines: [
            "laptop: upload notes/todo.txt", "laptop: upload photo.jpg", "laptop: upload readme.txt",
            "phone: download notes/todo.txt", "phone: download photo.jpg", "phone: download notes/ideas.txt",
            "phone: upload notes/todo.txt",
            "laptop: download notes/todo.txt", "laptop: deleteRemote photo.jpg",
            "phone: deleteLocal photo.jpg",
            "folders match: true",
        ]) { output in
            #expect(!output.contains("in sync: false"))
        },
    ]

    @Test(arguments: steps)
    func printsItsSteps(_ example: Example) async throws {
        let run = try await Self.launch(example.product)
        #expect(run.status == 0, "\(run.stderr)")
        Self.expect(run.stdout, toContain: example.lines)
        example.alsoCheck(run.stdout)
    }

    // Every example is a command-line tool: --help, and its station options.

    static let all = steps.map(\.product)

    /// `--help` and `-h` print the usage and exit 0 before anything starts: with a station that
    /// does not exist given too, a run that started anything would fail.
    @Test(arguments: all)
    func help(_ product: String) async throws {
        for arguments in [["--help"], ["--station", "http://127.0.0.1:9/", "-h"]] {
            let run = try await Self.launch(product, arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.stderr.isEmpty)
            #expect(run.stdout.hasPrefix("usage: swift run cipher-examples \(product)"))
            #expect(run.stdout.contains("--help, -h"))
            let networked = product != "post-quantum-tour"
            for option in ["--station URL", "--gateway URL", "--fingerprint sha256//…", "--keep"] {
                #expect(run.stdout.contains(option) == networked, "\(option)")
            }
        }
    }

    /// Without a step `cipher-examples` lists every step and exits 2 (with `--help`, 0); an
    /// unknown step is a usage error.
    @Test func stepsAreListed() async throws {
        let bare = try await Self.launch(nil), help = try await Self.launch(nil, ["--help"])
        #expect(bare.status == 2 && help.status == 0)
        for step in Self.all {
            #expect(bare.stdout.contains("  \(step) ") && help.stdout.contains("  \(step) "), "\(step) not listed")
        }
        let unknown = try await Self.launch("pair-devices")
        #expect(unknown.status == 2)
        #expect(unknown.stderr.hasPrefix("cipher-examples: no step named pair-devices"))
    }

    @Test func unknownOptionIsAUsageError() async throws {
        let run = try await Self.launch("read-manifest", ["--stations", "http://127.0.0.1:9/"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("read-manifest: unknown option --stations"))
        #expect(run.stderr.contains("usage: swift run cipher-examples read-manifest"))
        #expect(run.stdout.isEmpty)
    }

    /// An emulator on loopback behind the package's TLS test front (`scripts/tls-front.py`) with a
    /// run.py-style self-signed certificate: a station reached only by pinning its key.
    final class TLSStation: Sendable {
        let emulator: StationEmulator
        let front: TLSFront
        let arguments: [String]

        init() throws {
            emulator = try StationEmulator()
            let url = try emulator.start()
            front = try TLSFront.start(backendPort: UInt16(try #require(url.port)), certificate: .runPyStyle)
            let gateway = try #require(emulator.gatewayURL)
            arguments = ["--station", front.url.absoluteString, "--gateway", gateway.absoluteString, "--fingerprint", front.pin.pinString]
        }

        deinit {
            front.stop()
            emulator.stop()
        }

        /// Runs `product` against this station, typing the PINs it logs.
        func run(_ product: String, _ extra: [String] = []) async throws -> ExampleRun {
            try await ExampleTests.launch(product, arguments + extra, pinsFrom: emulator.log)
        }

        /// Every post in the station's manifest, in any namespace.
        var posts: [PostEntry] {
            let manifest = emulator.manifest
            return manifest.clients.keys.flatMap { manifest.posts(in: $0) }
        }

        /// `followers_count` of the station's `/profile`.
        func followersCount() async throws -> Int {
            let response = await emulator.handle(StationRequest(method: "GET", target: "/profile", receivedAt: Date().timeIntervalSince1970))
            let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            return try #require(object["followers_count"] as? Int)
        }
    }

    /// The networked examples (all but the post-quantum tour) and lines each prints against a TLS station.
    static let networked: [Example] = [
        Example(product: "pair-device", lines: ["signed call accepted, followers: 0", "TLS key pin: sha256//"]),
        Example(product: "sign-request", lines: ["GET /followers, signed for /followers: HTTP 200", "GET /followers, signed for /following: HTTP 401"]),
        Example(product: "read-manifest", lines: ["posts: 2, skipped: 0", "removed: post report.pdf", "removed: post holiday.jpg"]),
        Example(product: "open-envelope", lines: ["post key recovered: 32 B", "content: hello world", "removed: post secret.txt"]),
        Example(product: "publish-post", lines: [
            "the follower now reads: diary.txt, for-followers.txt, for-friend.txt, hello-world.txt\n", "the owner still downloads it: true",
            "removed: post large.bin", "removed: profile changes", "removed: follower ",
        ]),
        Example(product: "two-clients", lines: [
            "notes app sees: Shopping, Todo\n", "removed: post Todo",
            "left on the station: namespace notes, empty (the protocol has no call to remove a namespace)",
        ]),
        Example(product: "read-followed", lines: ["news.txt: shared with followers", "readable posts: 1 of 2", "removed: follower "]),
        Example(product: "sync-folder", lines: ["folders match: true", "removed: post todo.txt",
                                                  "left on the station: namespace sync-example, empty"]),
    ]

    /// Each networked example works against a self-signed TLS station given `--fingerprint` (every
    /// request pinned, its own requests included), removes what it created, and says that the
    /// device it paired stays.
    @Test(arguments: networked)
    func overTLSLeavesNothingBehind(_ example: Example) async throws {
        let station = try TLSStation()
        let profileBefore = station.emulator.manifest.clients["drive"]?.profile
        let run = try await station.run(example.product)
        #expect(run.status == 0, "\(run.stderr)")
        Self.expect(run.stdout, toContain: example.lines + ["left on the station: paired device "])
        #expect(station.posts.map(\.postCID) == [], "posts left behind")
        #expect(try await station.followersCount() == 0, "followers left behind")
        let profileAfter = station.emulator.manifest.clients["drive"]?.profile
        #expect(profileAfter?.displayName == profileBefore?.displayName && profileAfter?.bio == profileBefore?.bio, "profile left changed")
    }

    @Test func keepLeavesWhatTheExampleCreated() async throws {
        let station = try TLSStation()
        let run = try await station.run("read-manifest", ["--keep"])
        #expect(run.status == 0, "\(run.stderr)")
        Self.expect(run.stdout, toContain: ["kept (--keep): post report.pdf", "kept (--keep): post holiday.jpg"])
        #expect(station.posts.count == 2)
    }
}
#endif
