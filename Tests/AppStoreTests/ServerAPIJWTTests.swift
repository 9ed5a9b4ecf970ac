import Foundation
import HTTP
import Testing
@testable import AppStore

/// The ES256 bearer token: Apple's header and claims, a signature OpenSSL verifies with the key's
/// public half (through the module's `EVPKey` verifier), reuse across requests, renewal before
/// expiry, and `.p8` loading.
@Suite struct ServerAPIJWTTests {
    /// A throw-away P-384 key (openssl genpkey, ec_paramgen_curve:P-384): right format, wrong curve.
    static let p384PEM = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDDAGnKTcDbyOfPIdbxq
        NoiioNW9X7Po5fm3i74ooUV+4Q8GyY+xQgbKoX4WEWqIkcOhZANiAAT3UM3SSXn6
        GN04tlZ1hWmUoK9OLaPXpjRZ/nYOANX5p1m3VDAkHInD+I8F3hqA+vB7hJtgB64a
        K/IUza4RDWdPGbf1uQ1aJVIY7N4P3q7SkAms8qE3o6FCfEW7WKd/jKI=
        -----END PRIVATE KEY-----
        """

    static func bearer(_ request: HTTPRequest?) throws -> AppStoreBearerToken {
        let header = try #require(request?.headers["Authorization"])
        #expect(header.hasPrefix("Bearer "))
        return try #require(AppStoreBearerToken(parsing: String(header.dropFirst(7))))
    }

    @Test func tokenHeaderClaimsAndSignature() async throws {
        let signer = try AppStoreJWTSigner.generate()
        let stub = StubTransport(sequence: [ServerAPIFixture.json("{\"signedTransactionInfo\":\"a.b.c\"}")])
        _ = try await ServerAPIFixture.client(stub, signer: signer).getTransactionInfo(transactionId: "1")
        let token = try Self.bearer(stub.requests.first)

        #expect(token.algorithm == "ES256")
        #expect(token.keyId == ServerAPIFixture.keyId)
        #expect(token.type == "JWT")
        #expect(token.issuer == ServerAPIFixture.issuerId)
        #expect(token.audience == "appstoreconnect-v1")
        #expect(token.bundleId == ServerAPIFixture.bundleId)
        let now = Int64(TestClock.inside.timeIntervalSince1970)
        #expect(token.issuedAt == now)
        #expect(token.expiresAt == now + 1800)
        #expect(try #require(token.expiresAt) - (token.issuedAt ?? 0) <= 3600)

        // The exact JSON Apple documents, in order.
        let parts = token.token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        #expect(String(decoding: try #require(Base64URL.decode(parts[0])), as: UTF8.self)
                == "{\"alg\":\"ES256\",\"kid\":\"2X9R4HXF34\",\"typ\":\"JWT\"}")
        #expect(String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
                == "{\"iss\":\"57246542-96fe-1a63-e053-0824d011072a\",\"iat\":\(now),\"exp\":\(now + 1800),"
                + "\"aud\":\"appstoreconnect-v1\",\"bid\":\"com.example.app\"}")
        #expect(try #require(Base64URL.decode(parts[2])).count == 64, "JOSE r||s, not DER")

        // OpenSSL verifies the signature with the public half, and only that key.
        #expect(signer.publicKey.isValidSignature(of: token.token))
        #expect(!(try AppStoreJWTSigner.generate()).publicKey.isValidSignature(of: token.token))
        let tampered = token.token.replacingOccurrences(of: parts[1], with: Base64URL.encode(Array("{\"iss\":\"x\"}".utf8)))
        #expect(!signer.publicKey.isValidSignature(of: tampered))
        #expect(token.problem(publicKey: signer.publicKey, keyId: ServerAPIFixture.keyId, issuerId: ServerAPIFixture.issuerId,
                              bundleId: ServerAPIFixture.bundleId, now: TestClock.inside) == nil)
        #expect(token.problem(publicKey: signer.publicKey, keyId: ServerAPIFixture.keyId, issuerId: nil,
                              bundleId: "com.other", now: TestClock.inside) == "claim bid is not the configured bundle id")
        #expect(token.problem(publicKey: signer.publicKey, keyId: ServerAPIFixture.keyId, issuerId: nil,
                              bundleId: ServerAPIFixture.bundleId, now: TestClock.inside.addingTimeInterval(1900))
                == "token expired")
    }

    @Test func oneSignatureServesManyConcurrentRequests() async throws {
        let time = TestTime()
        let stub = StubTransport(sequence: [ServerAPIFixture.json("{\"signedTransactionInfo\":\"a.b.c\"}")])
        let client = try ServerAPIFixture.client(stub, clock: time.clock)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { _ = try await client.getTransactionInfo(transactionId: String(index + 1)) }
            }
            try await group.waitForAll()
        }
        #expect(client.tokens.signatureCount == 1)
        #expect(Set(stub.requests.compactMap { $0.headers["Authorization"] }).count == 1)

        time.advance(24 * 60)          // 24 of 30 minutes: still outside the 5-minute margin
        _ = try await client.getTransactionInfo(transactionId: "1")
        #expect(client.tokens.signatureCount == 1)
        time.advance(60 + 1)           // past exp - margin: renewed before it can expire in flight
        _ = try await client.getTransactionInfo(transactionId: "1")
        #expect(client.tokens.signatureCount == 2)
        let renewed = try Self.bearer(stub.requests.last)
        #expect(renewed.issuedAt == Int64(time.now.timeIntervalSince1970))
    }

    @Test func unauthorizedDropsTheCachedToken() async throws {
        let stub = StubTransport(sequence: [HTTPResponse(status: 401), ServerAPIFixture.json("{\"signedTransactionInfo\":\"a.b.c\"}")])
        let client = try ServerAPIFixture.client(stub)
        let error = try #require(await ServerAPIFixture.apiFailure { _ = try await client.getTransactionInfo(transactionId: "1") })
        #expect(error.reason == .apiUnauthorized && error.isConfigurationAlarm && !error.isRetryable)
        _ = try await client.getTransactionInfo(transactionId: "1")
        #expect(client.tokens.signatureCount == 2)
    }

    @Test func p8RoundTripAndFileLoading() throws {
        let signer = try AppStoreJWTSigner.generate()
        let pem = try signer.pkcs8PEM()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reloaded = try AppStoreJWTSigner(pem: pem)
        #expect(reloaded.publicKey.derBytes == signer.publicKey.derBytes)
        #expect(try AppStoreJWTSigner.PublicKey(pem: signer.publicKey.pem).derBytes == signer.publicKey.derBytes)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("p8-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("AuthKey_TEST.p8").path
        try Data(pem.utf8).write(to: URL(fileURLWithPath: path))
        var configuration = ServerAPIFixture.configuration()
        configuration.signingKeyPath = path
        let client = try AppStoreServerAPIClient(configuration: configuration, transport: StubTransport(sequence: []))
        #expect(signer.publicKey.isValidSignature(of: try client.tokens.token()))
        #expect(!"\(signer)".contains(pem.split(separator: "\n")[1]), "descriptions never show key material")
    }

    @Test(arguments: [
        ("", "no PRIVATE KEY PEM block"),
        ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "cannot be parsed"),
        (p384PEM, "EC P-256"),
    ])
    func unusableKeysAreConfigurationErrors(_ pem: String, _ fragment: String) {
        #expect {
            _ = try AppStoreJWTSigner(pem: pem)
        } throws: { error in
            let error = error as? AppStoreConfigurationError
            return error?.key == "signingKey" && error?.message.contains(fragment) == true
        }
    }

    @Test func missingKeyFileNamesThePath() {
        var configuration = ServerAPIFixture.configuration()
        configuration.signingKeyPath = "/nonexistent/AuthKey.p8"
        #expect {
            _ = try AppStoreServerAPIClient(configuration: configuration, transport: StubTransport(sequence: []))
        } throws: { error in
            (error as? AppStoreConfigurationError)?.message == "cannot read /nonexistent/AuthKey.p8"
        }
    }

    static func mutate(_ key: String, _ c: inout AppStoreServerAPIConfiguration) {
        switch key {
        case "serverAPI.keyId": c.keyId = "bad id"
        case "serverAPI.issuerId": c.issuerId = ""
        case "serverAPI.bundleId": c.bundleId = ""
        case "serverAPI.signingKeyPath": c.signingKeyPath = ""
        case "serverAPI.environment": c.environment = .xcode
        case "serverAPI.productionBaseURL": c.productionBaseURL = "https://x/"
        case "serverAPI.sandboxBaseURL": c.sandboxBaseURL = "ftp://x"
        case "serverAPI.requestTimeout": c.requestTimeout = .zero
        case "serverAPI.tokenLifetime": c.tokenLifetime = .seconds(3601)
        case "serverAPI.tokenRefreshMargin": c.tokenRefreshMargin = .seconds(1800)
        case "serverAPI.transactionNotFoundAttempts": c.transactionNotFoundAttempts = 0
        default: c.maxHistoryPages = 0
        }
    }

    @Test(arguments: ["serverAPI.keyId", "serverAPI.issuerId", "serverAPI.bundleId", "serverAPI.signingKeyPath",
                      "serverAPI.environment", "serverAPI.productionBaseURL", "serverAPI.sandboxBaseURL",
                      "serverAPI.requestTimeout", "serverAPI.tokenLifetime", "serverAPI.tokenRefreshMargin",
                      "serverAPI.transactionNotFoundAttempts", "serverAPI.maxHistoryPages"])
    func configurationIsValidated(_ key: String) {
        var configuration = ServerAPIFixture.configuration()
        #expect(throws: Never.self) { try configuration.validate() }
        Self.mutate(key, &configuration)
        #expect { try configuration.validate() } throws: { ($0 as? AppStoreConfigurationError)?.key == key }
    }

    @Test func defaultsAreApples() {
        let configuration = AppStoreServerAPIConfiguration(signingKeyPath: "k.p8", keyId: "K", issuerId: "i", bundleId: "b")
        #expect(configuration.productionBaseURL == "https://api.storekit.apple.com")
        #expect(configuration.sandboxBaseURL == "https://api.storekit-sandbox.apple.com")
        #expect(configuration.environment == .production)
        #expect(configuration.tokenLifetime <= .seconds(3600))
    }
}
