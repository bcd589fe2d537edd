// CSodium: the system libsodium (Debian `libsodium-dev`, Homebrew `libsodium`), found with
// pkg-config. Only the `ClassicalCrypto` target imports this module.
#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H

#include <sodium.h>

#endif
