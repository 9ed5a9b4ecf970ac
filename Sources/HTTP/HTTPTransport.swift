/// Something that can execute HTTP requests.
///
/// The App Store client depends on this protocol rather than on libcurl, so tests can use a stub
/// and the implementation can be swapped (``CurlHTTPClient`` today, `URLSession` if ever needed)
/// by changing one file.
public protocol HTTPTransport: Sendable {
    /// Executes one request and returns the complete response.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - timeout: The whole-request deadline (connect, send, wait and receive).
    /// - Returns: The response for any HTTP status, including 4xx and 5xx.
    /// - Throws: ``HTTPError`` for transport failures (check ``HTTPError/isRetryable``),
    ///   or `CancellationError` when the calling task is cancelled.
    func execute(_ request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse
}
