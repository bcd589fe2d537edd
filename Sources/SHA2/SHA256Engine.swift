#if canImport(CLibCrypto)
import CLibCrypto
#elseif canImport(CommonCrypto)
import CommonCrypto
#endif

/// One SHA-256 computation in the platform's crypto library: OpenSSL's libcrypto on Linux,
/// CommonCrypto on Apple platforms (both use the CPU's SHA instructions where it has them), and the
/// pure-Swift ``SHA256State`` in Linux builds without the `SystemLibraries` trait.
/// ``SHA256`` keeps it copy-on-write, so a copied hasher goes on independently.
final class SHA256Engine: @unchecked Sendable {
    // @unchecked: the context is only touched through a uniquely referenced engine (SHA256 copies
    // it before any change when it is shared), so no two threads ever use one context.
    #if canImport(CLibCrypto)
    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto cannot allocate a digest context") }
        self.context = context
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { fatalError("libcrypto has no SHA-256") }
    }

    private init(copying other: SHA256Engine) {
        guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto cannot allocate a digest context") }
        self.context = context
        guard EVP_MD_CTX_copy_ex(context, other.context) == 1 else { fatalError("libcrypto cannot copy a digest context") }
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawPointer, count: Int) {
        _ = EVP_DigestUpdate(context, bytes, count)
    }

    func finalize(into digest: UnsafeMutablePointer<UInt8>) {
        var length: UInt32 = 0
        _ = EVP_DigestFinal_ex(context, digest, &length)
    }
    #elseif canImport(CommonCrypto)
    private var context = CC_SHA256_CTX()

    init() { _ = CC_SHA256_Init(&context) }

    private init(copying other: SHA256Engine) { context = other.context }

    func update(_ bytes: UnsafeRawPointer, count: Int) {
        // CC_LONG is 32 bits wide: feed larger inputs in pieces.
        var offset = 0
        while offset < count {
            let piece = min(count - offset, Int(Int32.max))
            _ = CC_SHA256_Update(&context, bytes + offset, CC_LONG(piece))
            offset += piece
        }
    }

    func finalize(into digest: UnsafeMutablePointer<UInt8>) { _ = CC_SHA256_Final(digest, &context) }
    #else
    // Linux without the SystemLibraries trait: the pure-Swift SHA-256.
    private var state = SHA256State()

    init() {}

    private init(copying other: SHA256Engine) { state = other.state }

    func update(_ bytes: UnsafeRawPointer, count: Int) {
        state.update(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    func finalize(into digest: UnsafeMutablePointer<UInt8>) { state.finalize(into: digest) }
    #endif

    /// An independent engine in the same state.
    func copy() -> SHA256Engine { SHA256Engine(copying: self) }
}
