import CCurl

/// The single owner of one libcurl easy handle (`CURL *`) and its error buffer.
///
/// Handles are pooled by ``CurlMultiWorker`` and reused across requests; `curl_easy_reset`
/// clears per-request options while the multi handle keeps the shared connection cache.
///
/// - Important: Not thread-safe. Only the client's multi thread touches a handle, and a handle
///   must be removed from the multi handle before it is reset or freed.
final class CurlEasyHandle {
    /// The raw `CURL *`, valid for the lifetime of this object.
    let raw: UnsafeMutableRawPointer
    /// `CURLOPT_ERRORBUFFER` storage; libcurl writes a detailed message here on failure.
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// Creates a handle, or returns `nil` when libcurl is unusable or out of memory.
    init?() {
        guard CurlGlobal.isInitialized, let raw = curl_easy_init() else { return nil }
        self.raw = raw
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        prepareErrorBuffer()
    }

    deinit {
        curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }

    /// Clears every per-request option so the handle can serve another request.
    func reset() {
        curl_easy_reset(raw)
        prepareErrorBuffer()
    }

    private func prepareErrorBuffer() {
        errorBuffer[0] = 0
        _ = CCurl_easy_setopt_pointer(raw, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorBuffer))
    }

    /// libcurl's detailed message for the last failure, or an empty string.
    var errorMessage: String { String(cString: errorBuffer) }

    // MARK: Options

    /// Sets a `long` option.
    /// - Throws: ``HTTPError`` when libcurl rejects the option.
    func set(_ option: CURLoption, _ value: Int) throws(HTTPError) {
        try check(CCurl_easy_setopt_long(raw, option, value), option)
    }

    /// Sets a string option; libcurl copies the string.
    /// - Throws: ``HTTPError`` when libcurl rejects the option.
    func set(_ option: CURLoption, _ value: String) throws(HTTPError) {
        try check(CCurl_easy_setopt_string(raw, option, value), option)
    }

    /// Sets a pointer option; the pointee must outlive the transfer unless libcurl copies it.
    /// - Throws: ``HTTPError`` when libcurl rejects the option.
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws(HTTPError) {
        try check(CCurl_easy_setopt_pointer(raw, option, pointer), option)
    }

    /// Sets a `curl_off_t` option (the `*_LARGE` size options).
    /// - Throws: ``HTTPError`` when libcurl rejects the option.
    func set(_ option: CURLoption, offset value: Int64) throws(HTTPError) {
        try check(CCurl_easy_setopt_off_t(raw, option, curl_off_t(value)), option)
    }

    /// Hands libcurl a copy of the request body (`CURLOPT_COPYPOSTFIELDS`), so the Swift array
    /// need not outlive the call. `CURLOPT_POSTFIELDSIZE_LARGE` must be set first.
    /// - Throws: ``HTTPError`` when libcurl rejects the option (for example, out of memory).
    func copyPostFields(_ body: [UInt8]) throws(HTTPError) {
        // An empty body still needs a valid pointer: libcurl then sends `Content-Length: 0`.
        if body.isEmpty { return try set(CURLOPT_COPYPOSTFIELDS, "") }
        let code = body.withUnsafeBytes { bytes in
            CCurl_easy_setopt_pointer(raw, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        }
        try check(code, CURLOPT_COPYPOSTFIELDS)
    }

    /// Installs a write-shaped callback (`CURLOPT_WRITEFUNCTION` or `CURLOPT_HEADERFUNCTION`).
    /// - Throws: ``HTTPError`` when libcurl rejects the option.
    func set(_ option: CURLoption, callback: curl_write_callback) throws(HTTPError) {
        try check(CCurl_easy_setopt_write_function(raw, option, callback), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPError) {
        guard code == CURLE_OK else {
            throw HTTPError(curlCode: code, detail: "setting curl option \(option.rawValue) failed: "
                + String(cString: curl_easy_strerror(code)))
        }
    }

    // MARK: Info

    /// Reads a `long` info value, or 0 when unavailable.
    func info(_ info: CURLINFO) -> Int {
        var value = 0
        return CCurl_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : 0
    }
}
