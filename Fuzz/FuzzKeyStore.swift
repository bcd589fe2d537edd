// libFuzzer harness for what a device reads back from disk: `FileKeyStore`'s `keystore.params`
// and item files, and `DeviceCredentials` decoding. Files are written to a scratch directory and
// read through the public API; every input either opens or fails with a typed `.keyStore` error.
// The Argon2 cost a file names is capped here (it is input too, and a 1 GiB pass per input would
// only measure Argon2). Build and run with Fuzz/run.sh (see Fuzz/README.md).
import Foundation
import PQCrypto
import ClassicalCrypto
import StationClient

private func violated(_ property: String) -> Never {
    fatalError("property violated: \(property)")
}

/// The cheapest Argon2id cost libsodium accepts: stores made here unlock in microseconds.
private let cheap = Argon2.Limits(operations: 1, memoryBytes: 8 * 1024)
private let passphrase = "fuzz"

/// Scratch directories of this process: one for parameter files, one holding a valid store.
private let scratch: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("cipher-fuzz-keystore-\(getpid())")
    try? FileManager.default.removeItem(at: url)
    // Removed when the run ends (libFuzzer exits through exit(3)).
    atexit { try? FileManager.default.removeItem(at: scratch) }
    return url
}()
private let paramsDirectory = scratch.appendingPathComponent("params")
private let storeDirectory = scratch.appendingPathComponent("store")

/// A valid store, its `keystore.params` and one saved item's file (made once).
private let valid: (store: FileKeyStore, params: [UInt8], item: [UInt8]) = {
    guard let store = try? FileKeyStore(directory: storeDirectory, passphrase: passphrase, limits: cheap) else {
        violated("a store can be created")
    }
    runToCompletion { try? await store.save(Array("a secret".utf8), as: "valid") }
    guard let params = try? [UInt8](Data(contentsOf: storeDirectory.appendingPathComponent("keystore.params"))),
          let item = try? [UInt8](Data(contentsOf: storeDirectory.appendingPathComponent("valid.csks")))
    else { violated("the store wrote its files") }
    return (store, params, item)
}()

/// Runs async work to completion from the fuzzer's synchronous callback.

/// `bytes` with the Argon2 cost they name capped at 2 passes and 64 KiB.
private func capped(_ bytes: [UInt8]) -> [UInt8] {
    var file = bytes
    // Layout: "CSKP" 1, 16-byte salt, passes (u32, big endian), memory in KiB (u32), sealed check.
    if file.count >= 29 {
        if file[21..<25].reduce(0, { $0 << 8 | UInt32($1) }) > 2 { file.replaceSubrange(21..<25, with: [0, 0, 0, 1]) }
        if file[25..<29].reduce(0, { $0 << 8 | UInt32($1) }) > 64 { file.replaceSubrange(25..<29, with: [0, 0, 0, 8]) }
    }
    return file
}

/// Opens a store whose `keystore.params` holds `file` (pass it through `capped` first).
private func unlock(params file: [UInt8]) -> Bool {
    try? FileManager.default.removeItem(at: paramsDirectory)
    try? FileManager.default.createDirectory(at: paramsDirectory, withIntermediateDirectories: true)
    guard (try? Data(file).write(to: paramsDirectory.appendingPathComponent("keystore.params"))) != nil else { return false }
    do {
        _ = try FileKeyStore(directory: paramsDirectory, passphrase: passphrase, limits: cheap)
        return true
    } catch let error as StationClientError {
        guard error.kind == .keyStore else { violated("a damaged keystore.params is a .keyStore error") }
        return false
    } catch {
        violated("FileKeyStore throws StationClientError")
    }
}

/// Loads an item whose file holds `bytes` from the valid store.
private func load(item bytes: [UInt8]) -> [UInt8]? {
    guard (try? Data(bytes).write(to: storeDirectory.appendingPathComponent("fuzz.csks"))) != nil else { return nil }
    let result = LockedResult()
    runToCompletion {
        do {
            result.set(.success(try await valid.store.load("fuzz")))
        } catch {
            result.set(.failure(error))
        }
    }
    switch result.get() {
    case .success(let secret): return secret
    case .failure(let error as StationClientError) where error.kind == .keyStore: return nil
    default: violated("a damaged item is a .keyStore error")
    }
}

private final class LockedResult: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<[UInt8]?, any Error> = .success(nil)
    func set(_ new: Result<[UInt8]?, any Error>) { lock.lock(); value = new; lock.unlock() }
    func get() -> Result<[UInt8]?, any Error> { lock.lock(); defer { lock.unlock() }; return value }
}

/// `bytes` XORed into `file` from the start (the rest of `file` unchanged).
private func mutate(_ file: [UInt8], with bytes: ArraySlice<UInt8>) -> [UInt8] {
    var out = file
    for (offset, byte) in bytes.enumerated() where offset < out.count { out[offset] ^= byte }
    return out
}

/// What one input may make the readers hold at once (checked by AllocationMeter.swift).
let amplificationLimit = AmplificationLimit(bytesPerInputByte: 16, fixedBytes: 1 << 20)

/// One input, called by AllocationMeter.swift's `LLVMFuzzerTestOneInput`.
func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    switch selector % 5 {
    case 0:
        _ = unlock(params: capped(Array(rest)))
    case 1:
        _ = load(item: Array(rest))
    case 2:
        // A changed valid keystore.params opens only when unchanged (or with a changed salt or
        // cost, which then fails the check value).
        let file = capped(mutate(valid.params, with: rest))
        if unlock(params: file), file != valid.params { violated("a changed keystore.params does not unlock") }
    case 3:
        let file = mutate(valid.item, with: rest)
        if let secret = load(item: file) {
            guard file == valid.item, secret == Array("a secret".utf8) else { violated("a changed item does not open") }
        }
    default:
        // Stored credentials: decode, and what decodes writes back to bytes that decode the same.
        var input = Array(rest)
        if let credentials = try? DeviceCredentials(encoded: SecretBytes(zeroing: &input)) {
            // Decoded without a resolver, its keys are byte keys, which always encode.
            guard let written = try? credentials.encoded(), let again = try? DeviceCredentials(encoded: written),
                  (try? again.encoded()) == written else {
                violated("credentials round trip")
            }
        }
    }
    return 0
}
