import ClassicalCrypto
import Foundation

extension FileDescriptor {
    /// A descriptor of the client's own for the file an app's `handle` is open on (a duplicate,
    /// closed when the returned value is gone, while the app's handle stays open): the calls that
    /// take an open file read and write through it, never through a path.
    static func duplicating(_ handle: FileHandle) throws(ClassicalCryptoError) -> FileDescriptor {
        let descriptor = handle.fileDescriptor
        return try duplicating(descriptor, path: "the open file (descriptor \(descriptor))")
    }
}
