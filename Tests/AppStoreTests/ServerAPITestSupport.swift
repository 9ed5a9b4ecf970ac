import Foundation
import HTTP
import Synchronization
import Testing
@testable import AppStore

/// An ``HTTPTransport`` that answers from a closure and records every request, so classification
/// and request shape can be tested exactly, without a network.
final class StubTransport: HTTPTransport {
    typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse
    private let handler: Handler
    private let recorded = Mutex<[(request: HTTPRequest, timeout: Duration)]>([])

    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Answers the given responses in order (the last one repeats).
    convenience init(sequence: [HTTPResponse]) {
        let index = Atomic<Int>(0)
        self.init { _ in
            let position = index.add(1, ordering: .relaxed).oldValue
            return sequence[min(position, sequence.count - 1)]
        }
    }

    func execute(_ request: HTTPRequest, timeout: Duration) async throws -> HTTPResponse {
        recorded.withLock { $0.append((request, timeout)) }
        return try await handler(request)
    }

    var requests: [HTTPRequest] { recorded.withLock { $0.map(\.request) } }
    var timeouts: [Duration] { recorded.withLock { $0.map(\.timeout) } }
}

/// A movable clock for token lifetime tests.
final class TestTime: Sendable {
    private let seconds: Mutex<Double>
    init(_ start: Date = TestClock.inside) { seconds = Mutex(start.timeIntervalSince1970) }
    var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
    func advance(_ by: Double) { seconds.withLock { $0 += by } }
    var clock: @Sendable () -> Date { { self.now } }
}

enum ServerAPIFixture {
    static let keyId = "2X9R4HXF34"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let bundleId = "com.example.app"
    static let production = "https://api.example.test"
    static let sandbox = "https://sandbox.example.test"

    static func configuration() -> AppStoreServerAPIConfiguration {
        var configuration = AppStoreServerAPIConfiguration(signingKeyPath: "/unused.p8", keyId: keyId,
                                                           issuerId: issuerId, bundleId: bundleId)
        configuration.productionBaseURL = production
        configuration.sandboxBaseURL = sandbox
        return configuration
    }

    static func client(_ transport: StubTransport, signer: AppStoreJWTSigner? = nil,
                       configuration: AppStoreServerAPIConfiguration = configuration(),
                       clock: @escaping @Sendable () -> Date = TestClock.fixed) throws -> AppStoreServerAPIClient {
        try AppStoreServerAPIClient(configuration: configuration, signer: try signer ?? AppStoreJWTSigner.generate(),
                                    transport: transport, clock: clock)
    }

    static func json(_ text: String, status: Int = 200, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/json"
        return HTTPResponse(status: status, headers: headers, body: Array(text.utf8))
    }

    static func apiError(_ status: Int, _ code: Int64, headers: HTTPHeaders = [:]) -> HTTPResponse {
        json("{\"errorCode\":\(code),\"errorMessage\":\"test\"}", status: status, headers: headers)
    }

    /// Runs `body` and returns the ``AppStoreServerAPIError`` it threw.
    static func apiFailure(_ body: () async throws -> Void) async -> AppStoreServerAPIError? {
        do { try await body() } catch { return error as? AppStoreServerAPIError }
        return nil
    }

    /// Runs `body` and returns the ``VerifyReceiptError`` it threw.
    static func receiptFailure(_ body: () async throws -> Void) async -> VerifyReceiptError? {
        do { try await body() } catch { return error as? VerifyReceiptError }
        return nil
    }
}
