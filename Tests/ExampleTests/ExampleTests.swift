import Foundation
import TestSupport
import Testing

/// Builds (through the test target's dependencies) and runs every example, checking its output,
/// like swift-argument-parser's example tests.
@Suite("Examples")
struct ExampleTests {
    /// The directory holding the built executables: the one containing the test bundle.
    static var productsDirectory: URL {
        var url = Bundle.main.bundleURL
        // The test runner's bundle lives in the products directory (xctest bundle or runner binary).
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url
    }

    static func run(_ product: String, _ arguments: [String] = []) throws -> String {
        let executable = productsDirectory.appendingPathComponent(product).path
        let output = try InteropPython.run(executable, arguments, input: Data())
        return String(decoding: output, as: UTF8.self)
    }

    @Test func postQuantumTour() throws {
        let output = try Self.run("post-quantum-tour")
        #expect(output.contains("ML-KEM-768: public key 1184 B, ciphertext 1088 B, shared secrets match: true"))
        #expect(output.contains("reloaded 2400-byte key decapsulates too: true"))
        // SHA3-256("cipher station"), computed independently with Python's hashlib.
        #expect(output.contains("f36dbec02a696b1acdde0b0a9d2fe173c485b396cb0c8e4bba0e11e66abe8a3d"))
    }

    // The step examples run against an embedded StationEmulator (no --station argument).

    @Test func pairDevice() throws {
        let output = try Self.run("pair-device")
        #expect(output.range(of: #"paired device uid: examplelaptop-[0-9a-f]{8}\n"#, options: .regularExpression) != nil)
        #expect(output.contains("ML-KEM-768 public key: 1184 B"))
        #expect(output.contains("ML-DSA-65 public key: 1952 B"))
        #expect(output.contains("reloaded from the key store: true"))
        #expect(output.contains("signed call accepted, followers: 0"))
    }

    @Test func signRequest() throws {
        let output = try Self.run("sign-request")
        #expect(output.contains("canonical string fields: 7"))
        // SHA-256 of the empty body, the value every GET signs.
        #expect(output.contains("body sha256 (empty body): e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        for header in ["x-cipher-uid", "x-cipher-device", "x-cipher-ts", "x-cipher-nonce", "x-cipher-body-sha256", "x-cipher-sig"] {
            #expect(output.contains("  \(header): "))
        }
        #expect(output.contains("GET /followers, signed for /followers: HTTP 200"))
        #expect(output.contains("GET /followers, signed for /following: HTTP 401"))
    }

    @Test func readManifest() throws {
        let output = try Self.run("read-manifest")
        #expect(output.range(of: #"manifest CID: Qm[1-9A-HJ-NP-Za-km-z]{44}"#, options: .regularExpression) != nil)
        #expect(output.contains("namespaces: drive\n"))
        #expect(output.components(separatedBy: "audience self, envelopes Qm").count == 3)
        #expect(output.contains("decrypted: report.pdf"))
        #expect(output.contains("decrypted: holiday.jpg"))
        #expect(output.contains("posts: 2, skipped: 0"))
        #expect(output.contains("streamed: report.pdf\nstreamed: holiday.jpg\n"))
        #expect(output.contains("storage: drive has 2 posts"))
    }

    @Test func openEnvelope() throws {
        let output = try Self.run("open-envelope")
        // 2 + 1088 + 16 + 32 + 24 (nonce) bytes.
        #expect(output.contains("envelope: 1162 B, ML-KEM ciphertext length prefix 1088"))
        #expect(output.contains("post key recovered: 32 B"))
        #expect(output.contains(#"metadata: {"filename":"secret.txt","mime_type":"text/plain","size_bytes":11}"#))
        #expect(output.contains("content: hello world"))
    }

    @Test func publishPost() throws {
        let output = try Self.run("publish-post")
        for mode in ["self", "specific", "all"] { #expect(output.contains("published \(mode): envelopes yes")) }
        #expect(output.contains("published public: envelopes none"))
        #expect(output.contains("large post uploaded: all bytes"))
        #expect(output.contains("profile: Publisher, posts things"))
        #expect(output.contains("the follower reads: for-followers.txt, for-friend.txt, hello-world.txt\n"))
        #expect(output.contains("reshared diary.txt to all as a new post (old entry removed: true)"))
        #expect(output.contains("the follower now reads: diary.txt, for-followers.txt, for-friend.txt, hello-world.txt\n"))
        #expect(output.contains("the owner still downloads it: true"))
    }

    @Test func twoClients() throws {
        let output = try Self.run("two-clients")
        #expect(output.contains("manifest namespace drive: 1 posts"))
        #expect(output.contains("manifest namespace notes: 2 posts"))
        #expect(output.contains("file app sees: taxes.pdf\n"))
        #expect(output.contains("notes app sees: Shopping, Todo\n"))
    }

    @Test func readFollowed() throws {
        let output = try Self.run("read-followed")
        #expect(output.contains("follow request: follow_request_pending_multi_device"))
        #expect(output.contains("pending: true"))
        #expect(output.contains("news.txt: shared with followers"))
        #expect(!output.contains("private.txt"))
        #expect(output.contains("saved to a file: 21 bytes"))
        #expect(output.contains("readable posts: 1 of 2"))
    }
}
