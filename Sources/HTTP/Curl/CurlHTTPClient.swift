import CCurl
import Synchronization

/// An ``HTTPTransport`` over libcurl's multi interface: one dedicated thread, waiting on epoll and
/// driving libcurl's event API, serves every request, multiplexing them over HTTP/2 (or pooled
/// HTTP/1.1 keep-alive) connections.
///
/// ```swift
/// let client = try CurlHTTPClient(configuration: .init())
/// let response = try await client.execute(HTTPRequest(url: "https://example.com"), timeout: .seconds(5))
/// client.shutdown()
/// ```
///
/// Hundreds of requests may be in flight at once from any number of tasks; none of them blocks a
/// thread of the Swift cooperative pool. Each call suspends on a continuation that the multi
/// thread resumes when libcurl reports the transfer done.
///
/// - Important: Call ``shutdown()`` (or drop the last reference) to stop the thread; pending
///   requests then fail with ``HTTPError/Code/shutdown``.
public final class CurlHTTPClient: HTTPTransport {
    /// The configuration the client was created with.
    public let configuration: Configuration
    private let loop: CurlMultiLoop

    /// Creates a client and starts its multi thread.
    /// - Parameter configuration: Limits, timeouts and TLS settings.
    /// - Throws: ``HTTPError`` with ``HTTPError/Code/invalidConfiguration`` for invalid settings,
    ///   or ``HTTPError/Code/other`` when libcurl cannot be initialised.
    public init(configuration: Configuration = Configuration()) throws(HTTPError) {
        try configuration.validate()
        self.configuration = configuration
        self.loop = try CurlMultiLoop(configuration: configuration)
    }

    deinit {
        loop.shutdown()
    }

    /// Whether the linked libcurl can speak HTTP/2 (built with nghttp2); without it
    /// ``Configuration/preferHTTP2`` silently falls back to HTTP/1.1.
    public static var supportsHTTP2: Bool { CCurl_version_has_http2() != 0 }

    /// Executes a request with an explicit whole-request deadline.
    ///
    /// Cancelling the calling task aborts the transfer promptly (its connection is closed, not
    /// reused) and throws `CancellationError`.
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - timeout: Deadline covering queueing for a connection, connecting, sending and receiving.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``HTTPError`` for transport failures (see ``HTTPError/isRetryable``), or
    ///   `CancellationError`.
    public func execute(_ request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
        try request.validate()
        guard timeout > .zero else {
            throw HTTPError(code: .invalidRequest, message: "timeout must be positive, got \(timeout)")
        }
        let transfer = CurlTransfer(
            id: loop.makeID(), request: request, timeout: timeout,
            maxBodySize: configuration.maxResponseBodySize)
        let loop = self.loop
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(id: transfer.id)
        }
    }

    /// Executes a request with ``Configuration/defaultRequestTimeout``.
    /// - Parameter request: The request to send.
    /// - Returns: The response, whatever its status code.
    /// - Throws: ``HTTPError`` for transport failures, or `CancellationError`.
    public func execute(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await execute(request, timeout: configuration.defaultRequestTimeout)
    }

    /// Stops the client without waiting: requests queued or in flight fail with
    /// ``HTTPError/Code/shutdown``, later calls fail immediately, and the multi thread exits.
    /// Safe to call more than once.
    public func shutdown() {
        loop.shutdown()
    }

    /// Stops the client and suspends until its thread has exited and every libcurl handle and
    /// connection has been released.
    public func shutdownAndWait() async {
        loop.shutdown()
        await loop.waitForTermination()
    }

    /// Counters for metrics and for checking connection reuse.
    public var statistics: Statistics {
        Statistics(
            requestsSucceeded: loop.counters.succeeded.load(ordering: .relaxed),
            requestsFailed: loop.counters.failed.load(ordering: .relaxed),
            connectionsOpened: loop.counters.connections.load(ordering: .relaxed))
    }
}
