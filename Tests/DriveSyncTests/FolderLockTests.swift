import Foundation
import Testing
@testable import DriveSync

/// One sync of a folder at a time: the outcome is asserted, never how long anything took.
@Suite("The folder lock")
struct FolderLockTests {
    @Test func aSecondSyncIsBusyUntilTheFirstEnds() async throws {
        try await FolderFixture.with { fixture in
            var first: FolderLock? = try await FolderLock.acquire(fixture.folder, waiting: false)
            // Another value of the same folder, as another DriveSync of it would make.
            let again = LocalFolder(root: fixture.root)
            let error = await #expect(throws: DriveSyncError.self) { try await FolderLock.acquire(again, waiting: false) }
            #expect(error?.kind == .busy)
            withExtendedLifetime(first) {}
            first = nil
            let second = try await FolderLock.acquire(again, waiting: false)
            withExtendedLifetime(second) {}
            #expect(FileManager.default.fileExists(atPath: fixture.url(".cipher-sync/lock").path))
        }
    }

    @Test func aWaitingSyncStartsOnceTheFirstEnds() async throws {
        try await FolderFixture.with { fixture in
            let folder = fixture.folder
            let holder = LockHolder(try await FolderLock.acquire(folder, waiting: false))
            let releasing = Task {
                try? await Task.sleep(for: .milliseconds(300))
                await holder.release()
            }
            let second = try await FolderLock.acquire(folder, waiting: true)
            // Acquired only once the first was released.
            #expect(await holder.isReleased)
            await releasing.value
            let error = await #expect(throws: DriveSyncError.self) { try await FolderLock.acquire(folder, waiting: false) }
            #expect(error?.kind == .busy)
            withExtendedLifetime(second) {}
        }
    }

    @Test func waitingIsCancellable() async throws {
        try await FolderFixture.with { fixture in
            let folder = fixture.folder
            let first = try await FolderLock.acquire(folder, waiting: false)
            let waiter = Task { try await FolderLock.acquire(folder, waiting: true) }
            waiter.cancel()
            let outcome = await waiter.result
            #expect(throws: DriveSyncError.self) { try outcome.get() }
            #expect((try? outcome.get()) == nil)
            if case .failure(let error) = outcome { #expect((error as? DriveSyncError)?.kind == .cancelled) }
            withExtendedLifetime(first) {}
        }
    }
}

/// Holds a folder lock until ``release()``, for a test that releases it from another task.
actor LockHolder {
    private var lock: FolderLock?
    private(set) var isReleased = false

    init(_ lock: FolderLock) { self.lock = lock }

    func release() {
        isReleased = true
        lock = nil
    }
}
