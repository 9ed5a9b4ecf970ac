import AppStore
import Foundation
import HTTP
import Synchronization

/// The request handler behind ``FakeAppStore``: environment prefix, latency, faults, then the
/// endpoint. A separate object so the server's handler can capture it before the store exists.
final class FakeAppStoreRouter: Sendable {
    let configuration: FakeAppStoreConfiguration
    let store: FakeTransactionStore
    let faults: Mutex<FakeAppStoreFaults>
    let random: FakeRandom
    let counters = FakeAppStoreCounters()
    let apiPublicKey: AppStoreJWTSigner.PublicKey
    /// Sent notifications (Get Notification History) and their delivery.
    let notifications: FakeNotificationCenter
    /// What Send Consumption Information received, in order.
    let consumptionReports = Mutex<[FakeConsumptionReport]>([])
    /// Arrivals and 429s, for budget checks.
    let requestLog = FakeRequestLog()

    init(configuration: FakeAppStoreConfiguration, store: FakeTransactionStore, notifications: FakeNotificationCenter) {
        self.configuration = configuration
        self.store = store
        self.notifications = notifications
        self.faults = Mutex(configuration.faults)
        self.random = FakeRandom(seed: configuration.seed)
        self.apiPublicKey = configuration.credentials.apiKey.publicKey
    }

    var now: Date { configuration.clock() }

    func handle(_ request: HTTPServerRequest) async -> HTTPServerResponse {
        counters.requests.add(1, ordering: .relaxed)
        var path = request.path
        var environment = AppStoreEnvironment.production
        if path == "/sandbox" || path.hasPrefix("/sandbox/") {
            path.removeFirst("/sandbox".count)
            environment = .sandbox
        }
        let isVerifyReceipt = path == "/verifyReceipt"
        guard isVerifyReceipt || path.hasPrefix("/inApps/") else { return HTTPServerResponse(status: 404) }
        if !isVerifyReceipt { requestLog.arrived(path, at: now) }

        let knobs = faults.withLock { $0 }
        await delay(knobs)
        if let fault = knobs.pick(random.unit(), verifyReceipt: isVerifyReceipt) {
            return await inject(fault, knobs: knobs, verifyReceipt: isVerifyReceipt, environment: environment, path: path)
        }
        if isVerifyReceipt {
            guard request.method == .post else { return HTTPServerResponse(status: 405, headers: ["Allow": "POST"]) }
            return verifyReceipt(request, endpoint: environment, knobs: knobs)
        }
        guard authorized(request) else {
            counters.unauthorized.add(1, ordering: .relaxed)
            return HTTPServerResponse(status: 401)
        }
        return serverAPI(path: path, request: request, environment: environment)
    }

    /// Waits the fixed latency plus a random share of the jitter (on the shared ``FakeDelayLine``,
    /// which holds many requests more cheaply than a `Task.sleep` each).
    private func delay(_ knobs: FakeAppStoreFaults) async {
        var wait = knobs.latency
        if knobs.jitter > .zero { wait += knobs.jitter * random.unit() }
        await FakeDelayLine.shared.wait(for: wait)
    }

    private func inject(_ fault: FakeAppStoreFaults.Fault, knobs: FakeAppStoreFaults, verifyReceipt: Bool,
                        environment: AppStoreEnvironment, path: String) async -> HTTPServerResponse {
        switch fault {
        case .drop:
            counters.dropped.add(1, ordering: .relaxed)
            return .dropConnection
        case .timeout:
            counters.timedOut.add(1, ordering: .relaxed)
            try? await Task.sleep(for: knobs.timeoutHold)
            return .dropConnection
        case .serverError:
            counters.serverErrors.add(1, ordering: .relaxed)
            if verifyReceipt { return .text("Service Unavailable", status: 503) }
            return Self.apiError(500, 5_000_001, "An unknown error occurred. Please try again.")
        case .rateLimit:
            counters.rateLimited.add(1, ordering: .relaxed)
            let retryAt = now.addingTimeInterval(knobs.retryAfterDelay / .seconds(1))
            var response = verifyReceipt ? HTTPServerResponse(status: 429)
                : Self.apiError(429, 4_290_000, "Rate limit exceeded.")
            response.headers["Retry-After"] = String(retryAt.fakeMilliseconds)
            requestLog.throttled(path, at: now, retryAt: retryAt)
            return response
        case .status21005:
            counters.status21005.add(1, ordering: .relaxed)
            return .json(FakeJSON.object([("status", .integer(21005)), ("environment", .string(environment.rawValue))]).bytes)
        }
    }

    /// Whether the request carries a bearer JWT that Apple would accept from this key.
    private func authorized(_ request: HTTPServerRequest) -> Bool {
        guard let header = request.headers["Authorization"], header.hasPrefix("Bearer "),
              let token = AppStoreBearerToken(parsing: String(header.dropFirst("Bearer ".count))) else { return false }
        let credentials = configuration.credentials
        return token.problem(publicKey: apiPublicKey, keyId: credentials.keyId, issuerId: credentials.issuerId,
                             bundleId: configuration.bundleId, now: now) == nil
    }

    /// An App Store Server API error body.
    static func apiError(_ status: Int, _ code: Int64, _ message: String) -> HTTPServerResponse {
        .json(FakeJSON.object([("errorCode", .integer(code)), ("errorMessage", .string(message))]).bytes, status: status)
    }

    /// Signs a payload with the fake's leaf key; the test PKI's signer cannot fail short of a
    /// broken OpenSSL, and then an answer without data is the honest one.
    func sign(_ payload: FakeJSON) -> String? {
        try? configuration.credentials.pki.signer.sign(payload: payload.bytes)
    }
}
