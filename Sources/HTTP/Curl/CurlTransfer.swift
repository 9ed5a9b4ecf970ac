import CCurl

/// One request in flight: the caller's continuation plus everything libcurl needs while the
/// transfer runs (header list, received headers and body).
///
/// - Important: Ownership moves in one direction. The calling task fills ``continuation`` and
///   hands the transfer to ``CurlMultiLoop/submit(_:)``; from then on exactly one party owns it:
///   the loop's pending queue (under its lock) or the multi thread. Whoever removes it from there
///   resumes the continuation exactly once via ``finish(_:)``. That protocol is why the type can be
///   `@unchecked Sendable` without its own lock.
final class CurlTransfer: @unchecked Sendable {
    /// Identifies the transfer for cancellation.
    let id: UInt64
    /// The request being executed.
    let request: HTTPRequest
    /// The whole-request deadline.
    let timeout: Duration
    /// The largest body accepted before failing with ``HTTPError/Code/tooLarge``.
    let maxBodySize: Int

    /// Resumed exactly once by ``finish(_:)``.
    var continuation: CheckedContinuation<HTTPResponse, any Error>?

    // Multi-thread-only state below.
    /// The easy handle running this transfer, while it is attached to a multi handle.
    var handle: CurlEasyHandle?
    /// The multi handle it is attached to, while it is.
    var shard: CurlMultiShard?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var responseHeaders = HTTPHeaders()
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    /// Creates a transfer; nothing is sent until it is submitted.
    init(id: UInt64, request: HTTPRequest, timeout: Duration, maxBodySize: Int) {
        self.id = id
        self.request = request
        self.timeout = timeout
        self.maxBodySize = maxBodySize
    }

    deinit {
        releaseHeaderList()
    }

    /// Resumes the caller; later calls are ignored so no path can resume twice.
    /// - Parameter result: The response or the error to throw.
    func finish(_ result: Result<HTTPResponse, any Error>) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }

    /// Frees the header list once libcurl no longer needs it (after the handle is detached).
    func releaseHeaderList() {
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
    }

    // MARK: Configuration

    /// Applies the request and client settings to a clean easy handle.
    /// - Parameters:
    ///   - handle: A new or reset handle.
    ///   - configuration: The client configuration.
    /// - Throws: ``HTTPError`` when libcurl rejects a value.
    func configure(_ handle: CurlEasyHandle, configuration: CurlHTTPClient.Configuration) throws(HTTPError) {
        try handle.set(CURLOPT_URL, request.url)
        try handle.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try handle.set(CURLOPT_NOSIGNAL, 1)  // signals are process-wide; we run many threads
        try handle.set(CURLOPT_TCP_KEEPALIVE, 1)
        try handle.set(CURLOPT_CONNECTTIMEOUT_MS, max(1, configuration.connectTimeout.clampedMilliseconds))
        try handle.set(CURLOPT_TIMEOUT_MS, max(1, timeout.clampedMilliseconds))
        if configuration.preferHTTP2 {
            try handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Wait for a multiplexable connection rather than opening more, but only for https:
            // over plain http libcurl learns "no multiplexing" from the first *response*, so
            // PIPEWAIT would serialize a burst behind one slow request.
            if request.url.utf8.count > 8, request.url.prefix(8).lowercased() == "https://" {
                try handle.set(CURLOPT_PIPEWAIT, 1)
            }
        } else {
            try handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        if !request.headers.contains("User-Agent") {
            try handle.set(CURLOPT_USERAGENT, configuration.userAgent)
        }
        if let caFile = configuration.caFile { try handle.set(CURLOPT_CAINFO, caFile) }
        if let caPath = configuration.caPath { try handle.set(CURLOPT_CAPATH, caPath) }
        try handle.set(CURLOPT_MAXFILESIZE_LARGE, offset: Int64(maxBodySize))
        try configureMethodAndBody(handle)
        try configureHeaders(handle)

        let context = Unmanaged.passUnretained(self).toOpaque()
        try handle.set(CURLOPT_WRITEFUNCTION, callback: curlBodyCallback)
        try handle.set(CURLOPT_WRITEDATA, pointer: context)
        try handle.set(CURLOPT_HEADERFUNCTION, callback: curlHeaderCallback)
        try handle.set(CURLOPT_HEADERDATA, pointer: context)
    }

    private func configureMethodAndBody(_ handle: CurlEasyHandle) throws(HTTPError) {
        switch request.method {
        case .get where request.body.isEmpty:
            try handle.set(CURLOPT_HTTPGET, 1)
            return
        case .head:
            try handle.set(CURLOPT_NOBODY, 1)
            return
        case .post:
            try handle.set(CURLOPT_POST, 1)
        default:
            try handle.set(CURLOPT_CUSTOMREQUEST, request.method.rawValue)
            if request.body.isEmpty { return }
        }
        // POSTFIELDSIZE must precede COPYPOSTFIELDS; libcurl copies the bytes during the call,
        // so the Swift array does not need to outlive it.
        try handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(request.body.count))
        try handle.copyPostFields(request.body)
    }

    private func configureHeaders(_ handle: CurlEasyHandle) throws(HTTPError) {
        var lines: [String] = request.headers.map { field in
            // "Name;" is libcurl's spelling for a header with an empty value ("Name:" would delete it).
            field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
        }
        // libcurl adds `Expect: 100-continue` to larger uploads, costing a round trip; disable it.
        if !request.headers.contains("Expect") { lines.append("Expect:") }
        // Without this libcurl labels every body form-urlencoded, which would be a lie.
        if !request.body.isEmpty, !request.headers.contains("Content-Type") { lines.append("Content-Type:") }
        releaseHeaderList()
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                throw HTTPError(code: .other, message: "out of memory building header list")
            }
            headerList = appended
        }
        if let headerList { try handle.set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headerList)) }
    }

    // MARK: Receiving (called by libcurl on the multi thread)

    /// Appends body bytes, refusing (which aborts the transfer) once the size limit is passed.
    /// - Returns: The number of bytes consumed; anything else makes libcurl fail with `CURLE_WRITE_ERROR`.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= maxBodySize else {
            bodyTooLarge = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// Records one raw header line. A status line starts a new header block, so interim (1xx)
    /// responses never leak their headers into the final one.
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let line = Substring(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self))
        if line.hasPrefix("HTTP/") {
            responseHeaders = HTTPHeaders()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = String(line[..<colon])
        let value = String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" })
        responseHeaders.add(name: name, value: value)
        if HTTPHeaders.equalNames(name, "Content-Length"), let length = Int(value), length > 0 {
            body.reserveCapacity(min(length, maxBodySize))
        }
    }

    /// Builds the outcome once libcurl reports the transfer done.
    /// - Parameters:
    ///   - code: The transfer result from `curl_multi_info_read`.
    ///   - handle: The handle that ran the transfer (still attached, so `getinfo` works).
    /// - Returns: The response, or the classified error.
    func outcome(code: CURLcode, handle: CurlEasyHandle) -> Result<HTTPResponse, HTTPError> {
        guard code == CURLE_OK else {
            if bodyTooLarge || code == CURLE_FILESIZE_EXCEEDED {
                return .failure(HTTPError(
                    code: .tooLarge,
                    message: "response body exceeds maxResponseBodySize (\(maxBodySize) bytes)",
                    curlCode: Int(code.rawValue)))
            }
            return .failure(HTTPError(curlCode: code, detail: handle.errorMessage))
        }
        let version: HTTPVersion = switch handle.info(CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case Int(CURL_HTTP_VERSION_3): .http3
        default: .http1_1
        }
        return .success(HTTPResponse(
            status: handle.info(CURLINFO_RESPONSE_CODE),
            headers: responseHeaders,
            body: body,
            httpVersion: version))
    }
}

/// `CURLOPT_WRITEFUNCTION`: forwards body bytes to the transfer named by the user pointer.
/// A capture-free closure, as C function pointers require; the transfer is kept alive by the
/// worker's active table for as long as libcurl may call this.
private let curlBodyCallback: curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let length = size * count
    guard let data, length > 0 else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length))
}

/// `CURLOPT_HEADERFUNCTION`: forwards each raw header line to the transfer.
private let curlHeaderCallback: curl_write_callback = { data, size, count, context in
    let length = size * count
    guard let context, let data else { return length }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
    return length
}
