// CSystemRandom: Linux's getrandom(2) declaration, which the Swift Glibc module leaves out.
// Only PQCrypto imports this module; nothing is linked (getrandom lives in libc).
#ifndef CSYSTEMRANDOM_SHIM_H
#define CSYSTEMRANDOM_SHIM_H

#if defined(__linux__)
#include <sys/random.h>
#endif

#endif
