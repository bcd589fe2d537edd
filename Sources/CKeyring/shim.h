// CKeyring: fixed-arity wrappers for the Linux kernel key retention service (add_key(2), keyctl(2)),
// which Swift cannot reach through the variadic syscall(2) and Glibc does not declare.
// Header-only: nothing is linked (the calls go straight to the kernel). Empty elsewhere.
#ifndef CKEYRING_SHIM_H
#define CKEYRING_SHIM_H

#if defined(__linux__)
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>

/// The calling process's session keyring (KEY_SPEC_SESSION_KEYRING).
static const int32_t cipher_keyring_session = -3;

/// KEYCTL_GET_KEYRING_ID without creating: the serial of the keyring `special` names (for the
/// session keyring of a process that has none, the user's default session keyring, which the
/// process then adopts), or -1 and errno.
static inline long cipher_keyring_id(int32_t special) {
    return syscall(SYS_keyctl, 0L, (long)special, 0L, 0L, 0L);
}

/// Adds (or updates) a "user" key holding `length` bytes in `keyring`: its serial, or -1 and errno.
static inline long cipher_keyring_add(const char *description, const void *payload, size_t length, int32_t keyring) {
    return syscall(SYS_add_key, "user", description, payload, length, keyring);
}

/// KEYCTL_SEARCH for a "user" key in `keyring` (and the keyrings it links): its serial, or -1 and errno.
static inline long cipher_keyring_search(int32_t keyring, const char *description) {
    return syscall(SYS_keyctl, 10L, (long)keyring, "user", description, 0L);
}

/// KEYCTL_READ: the payload's length (copied up to `capacity` bytes), or -1 and errno.
static inline long cipher_keyring_read(int32_t key, void *buffer, size_t capacity) {
    return syscall(SYS_keyctl, 11L, (long)key, buffer, capacity, 0L);
}

/// KEYCTL_SET_TIMEOUT: the key expires `seconds` from now (0: never). 0, or -1 and errno.
static inline long cipher_keyring_set_timeout(int32_t key, unsigned int seconds) {
    return syscall(SYS_keyctl, 15L, (long)key, (unsigned long)seconds, 0L, 0L);
}

/// KEYCTL_SETPERM: `permissions` as KEY_POS_* / KEY_USR_* bits. 0, or -1 and errno.
static inline long cipher_keyring_set_permissions(int32_t key, uint32_t permissions) {
    return syscall(SYS_keyctl, 5L, (long)key, (unsigned long)permissions, 0L, 0L);
}

/// KEYCTL_DESCRIBE: "type;uid;gid;perm;description" with its NUL (copied up to `capacity`
/// bytes); the full length, or -1 and errno.
static inline long cipher_keyring_describe(int32_t key, char *buffer, size_t capacity) {
    return syscall(SYS_keyctl, 6L, (long)key, buffer, capacity, 0L);
}

/// KEYCTL_INVALIDATE: the key is gone at once. 0, or -1 and errno.
static inline long cipher_keyring_invalidate(int32_t key) {
    return syscall(SYS_keyctl, 21L, (long)key, 0L, 0L, 0L);
}
#endif

#endif
