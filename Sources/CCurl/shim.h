#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

// Shim for libcurl. Swift cannot call C variadic functions, so every
// variadic entry point we need gets a typed, non-variadic static inline
// wrapper named C<Lib>_<c_symbol>_<argument kind>.

#include <curl/curl.h>

// --- curl_easy_setopt (variadic) -------------------------------------------

// curl_easy_setopt is variadic; this passes a `long` (CURLOPTTYPE_LONG options).
static inline CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic; this passes a C string (CURLOPTTYPE_STRINGPOINT; libcurl copies it).
static inline CURLcode CCurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic; this passes an opaque pointer (CURLOPTTYPE_OBJECTPOINT/CBPOINT/SLISTPOINT).
static inline CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic; this passes a curl_off_t (CURLOPTTYPE_OFF_T, e.g. *_LARGE sizes).
static inline CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// curl_easy_setopt is variadic; this passes a write/header callback (same C signature for both).
static inline CURLcode CCurl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback fn) {
    return curl_easy_setopt(handle, option, fn);
}

// curl_easy_setopt is variadic; this passes a CURLOPT_XFERINFOFUNCTION progress callback.
static inline CURLcode CCurl_easy_setopt_xferinfo_function(CURL *handle, CURLoption option, curl_xferinfo_callback fn) {
    return curl_easy_setopt(handle, option, fn);
}

// --- curl_easy_getinfo (variadic) ------------------------------------------

// curl_easy_getinfo is variadic; this reads a CURLINFO_LONG value.
static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}

// curl_easy_getinfo is variadic; this reads a CURLINFO_STRING value (owned by libcurl).
static inline CURLcode CCurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **out) {
    return curl_easy_getinfo(handle, info, out);
}

// curl_easy_getinfo is variadic; this reads a CURLINFO_OFF_T value.
static inline CURLcode CCurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}

// --- curl_multi_setopt (variadic) ------------------------------------------

// curl_multi_setopt is variadic; this passes a `long` (CURLMOPT_* limits, CURLMOPT_PIPELINING).
static inline CURLMcode CCurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

// curl_multi_setopt is variadic; this passes an opaque pointer (CURLMOPT_SOCKETDATA, CURLMOPT_TIMERDATA).
static inline CURLMcode CCurl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return curl_multi_setopt(handle, option, value);
}

// curl_multi_setopt is variadic; this installs the CURLMOPT_SOCKETFUNCTION callback
// (libcurl asks the application to watch, re-watch or forget a socket).
static inline CURLMcode CCurl_multi_setopt_socket_function(CURLM *handle, curl_socket_callback fn) {
    return curl_multi_setopt(handle, CURLMOPT_SOCKETFUNCTION, fn);
}

// curl_multi_setopt is variadic; this installs the CURLMOPT_TIMERFUNCTION callback
// (libcurl asks for a single timer to be set, replaced or cancelled).
static inline CURLMcode CCurl_multi_setopt_timer_function(CURLM *handle, curl_multi_timer_callback fn) {
    return curl_multi_setopt(handle, CURLMOPT_TIMERFUNCTION, fn);
}

// --- macros Swift cannot import ----------------------------------------------

// CURL_GLOBAL_ALL is an expression macro over other macros; expose it as a value.
static inline long CCurl_CURL_GLOBAL_ALL(void) { return CURL_GLOBAL_ALL; }

// CURLPIPE_MULTIPLEX is a `2L` macro; expose it with a definite C type.
static inline long CCurl_CURLPIPE_MULTIPLEX(void) { return CURLPIPE_MULTIPLEX; }

// CURL_VERSION_HTTP2 is a shift-expression macro; expose the feature test directly.
static inline int CCurl_version_has_http2(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return (info != NULL && (info->features & CURL_VERSION_HTTP2) != 0) ? 1 : 0;
}

#endif
