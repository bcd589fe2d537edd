// CLibCrypto: OpenSSL's libcrypto (Debian `libssl-dev`), found with pkg-config, on Linux only.
// Only `SHA2` (its `SHA256Engine`) imports this module: libcrypto's SHA-256 uses the CPU's SHA extensions
// (x86 SHA-NI, ARMv8 crypto) where they exist, several times faster than libsodium's portable C.
// Apple platforms use CommonCrypto instead.
#ifndef CLIBCRYPTO_SHIM_H
#define CLIBCRYPTO_SHIM_H

#include <openssl/evp.h>

#endif
