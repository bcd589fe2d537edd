import Foundation
import TestSupport
import Testing

/// Builds (through the test target's dependencies) and runs every example, checking its output,
/// like swift-argument-parser's example tests.
@Suite("Examples")
struct ExampleTests {
    static func run(_ product: String, _ arguments: [String] = []) throws -> String {
        let executable = PipedProcess.productsDirectory.appendingPathComponent(product).path
        let output = try InteropPython.run(executable, arguments, input: Data())
        return String(decoding: output, as: UTF8.self)
    }

    /// Expects each of `lines` in `output`, each a check of its own.
    static func expect(_ output: String, toContain lines: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for line in lines { #expect(output.contains(line), "missing: \(line)", sourceLocation: sourceLocation) }
    }

    @Test func postQuantumTour() throws {
        let output = try Self.run("post-quantum-tour")
        Self.expect(output, toContain: [
            "ML-KEM-768: public key 1184 B, ciphertext 1088 B, shared secrets match: true",
            "reloaded 2400-byte key decapsulates too: true",
            // SHA3-256("cipher station"), computed independently with Python's hashlib.
            "f36dbec02a696b1acdde0b0a9d2fe173c485b396cb0c8e4bba0e11e66abe8a3d",
        ])
    }

    // The step examples run against an embedded StationEmulator (no --station argument).

    @Test func pairDevice() throws {
        let output = try Self.run("pair-device")
        #expect(output.range(of: #"paired device uid: examplelaptop-[0-9a-f]{8}\n"#, options: .regularExpression) != nil)
        Self.expect(output, toContain: [
            "ML-KEM-768 public key: 1184 B",
            "ML-DSA-65 public key: 1952 B",
            "reloaded from the key store: true",
            "signed call accepted, followers: 0",
        ])
    }

    @Test func signRequest() throws {
        let output = try Self.run("sign-request")
        Self.expect(output, toContain: [
            "canonical string fields: 7",
            // SHA-256 of the empty body, the value every GET signs.
            "body sha256 (empty body): e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "GET /followers, signed for /followers: HTTP 200",
            "GET /followers, signed for /following: HTTP 401",
        ] + ["x-cipher-uid", "x-cipher-device", "x-cipher-ts", "x-cipher-nonce", "x-cipher-body-sha256", "x-cipher-sig"].map { "  \($0): " })
    }

    @Test func readManifest() throws {
        let output = try Self.run("read-manifest")
        #expect(output.range(of: #"manifest CID: Qm[1-9A-HJ-NP-Za-km-z]{44}"#, options: .regularExpression) != nil)
        #expect(output.components(separatedBy: "audience self, envelopes Qm").count == 3)
        Self.expect(output, toContain: [
            "namespaces: drive\n",
            "decrypted: report.pdf",
            "decrypted: holiday.jpg",
            "posts: 2, skipped: 0",
            "streamed: report.pdf\nstreamed: holiday.jpg\n",
            "storage: drive has 2 posts",
        ])
    }

    @Test func openEnvelope() throws {
        let output = try Self.run("open-envelope")
        Self.expect(output, toContain: [
            // 2 + 1088 + 16 + 32 + 24 (nonce) bytes.
            "envelope: 1162 B, ML-KEM ciphertext length prefix 1088",
            "post key recovered: 32 B",
            #"metadata: {"filename":"secret.txt","mime_type":"text/plain","size_bytes":11}"#,
            "content: hello world",
        ])
    }

    @Test func publishPost() throws {
        let output = try Self.run("publish-post")
        Self.expect(output, toContain: ["self", "specific", "all"].map { "published \($0): envelopes yes" } + [
            "published public: envelopes none",
            "large post uploaded: all bytes",
            "profile: Publisher, posts things",
            "the follower reads: for-followers.txt, for-friend.txt, hello-world.txt\n",
            "reshared diary.txt to all as a new post (old entry removed: true)",
            "the follower now reads: diary.txt, for-followers.txt, for-friend.txt, hello-world.txt\n",
            "the owner still downloads it: true",
        ])
    }

    @Test func twoClients() throws {
        let output = try Self.run("two-clients")
        Self.expect(output, toContain: [
            "manifest namespace drive: 1 posts",
            "manifest namespace notes: 2 posts",
            "file app sees: taxes.pdf\n",
            "notes app sees: Shopping, Todo\n",
        ])
    }

    @Test func readFollowed() throws {
        let output = try Self.run("read-followed")
        Self.expect(output, toContain: [
            "follow request: follow_request_pending_multi_device",
            "pending: true",
            "news.txt: shared with followers",
            "saved to a file: 21 bytes",
            "readable posts: 1 of 2",
        ])
        #expect(!output.contains("private.txt"))
    }
}
