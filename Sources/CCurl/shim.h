// CCurl: the libcurl headers for Swift, plus fixed-arity wrappers for libcurl's variadic calls.
//
// Swift cannot call C variadic functions, and curl_easy_setopt / curl_easy_getinfo /
// curl_multi_setopt take their value through `...`. Each wrapper below passes exactly one value of
// the type libcurl documents for that option class (long, curl_off_t, pointer, function pointer), so
// the value reaches libcurl with the ABI it expects.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

// Typed handles (struct Curl_easy *, struct Curl_multi *) instead of void *, so Swift sees
// OpaquePointer and cannot mix an easy handle up with a multi handle or a data pointer.
#define CURL_STRICTER
#include <curl/curl.h>

// MARK: curl_easy_setopt

static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// For string options; libcurl copies the string.
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// For pointers libcurl keeps: callback user data, the error buffer.
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_read_function(CURL *handle, CURLoption option, curl_read_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_seek_function(CURL *handle, CURLoption option, curl_seek_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_easy_setopt_xferinfo_function(CURL *handle, CURLoption option, curl_xferinfo_callback value) {
    return curl_easy_setopt(handle, option, value);
}

// MARK: curl_easy_getinfo

static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_socket(CURL *handle, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_easy_getinfo_certinfo(CURL *handle, CURLINFO info, struct curl_certinfo **value) {
    return curl_easy_getinfo(handle, info, value);
}

// MARK: curl_multi_setopt

static inline CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

// MARK: Constants Swift does not import (macros built from other macros)

static const long CCURL_GLOBAL_ALL = CURL_GLOBAL_ALL;
static const int CCURL_PAUSE_CONT = CURLPAUSE_CONT;
static const size_t CCURL_WRITEFUNC_PAUSE = CURL_WRITEFUNC_PAUSE;
static const size_t CCURL_READFUNC_PAUSE = CURL_READFUNC_PAUSE;
static const size_t CCURL_READFUNC_ABORT = CURL_READFUNC_ABORT;

/// Reads the result code of a finished transfer from a CURLMsg (a union member in C).
static inline CURLcode ccurl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

#endif
