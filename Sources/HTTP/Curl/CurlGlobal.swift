import CCurl

/// Process-wide libcurl initialisation.
///
/// `curl_global_init` must run once before any other libcurl call and is not guaranteed to be
/// thread-safe, so it sits behind a Swift `static let` (initialised exactly once, atomically).
enum CurlGlobal {
    /// `true` when `curl_global_init` succeeded; read it before creating handles.
    static let isInitialized: Bool = curl_global_init(CCurl_CURL_GLOBAL_ALL()) == CURLE_OK
}
