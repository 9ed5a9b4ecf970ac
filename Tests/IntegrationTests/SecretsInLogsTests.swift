import AppStore
import FakeAppStore
import Foundation
import Testing

/// Nothing secret, and no whole receipt or JWS, reaches a log line or a rejection's `detail`.
///
/// `receiptd dev` runs every stage at debug level against a fake App Store (Server API with a real
/// .p8 key and bearer tokens, verifyReceipt with a shared secret) that fails a third of its answers
/// (5xx, 429, 21005), with two short retry tiers. It is fed a valid and a forged JWS, App Store
/// transaction ids (one that does not exist, so it goes through both retry tiers and is then
/// rejected), base64 receipts, malformed records that carry the JWS and the secret in their value,
/// and an undecodable record at verify's input (dead-lettered). Then `receiptd replay` republishes
/// the dead letter and `receiptd config` prints the configuration. Every line of every
/// process's output, and every rejection's `detail`, is scanned for the JWS (whole and per segment),
/// the receipts, the private key's lines, the shared secret and anything JWT-shaped (`eyJ`, the
/// base64url of `{"`, with which every bearer token and JWS segment of JSON begins).
@Suite(.timeLimit(.minutes(5))) struct SecretsInLogsTests {
    @Test func noSecretOrWholeProofReachesLogsOrRejectionDetails() async throws {
        try #require(Kcat.available, "kcat is needed")
        let directory = try scratchDirectory("receiptd-secrets")
        defer { try? FileManager.default.removeItem(at: directory) }

        let samples = try Samples()
        let credentials = try FakeAppStoreCredentials.generate()
        let files = try credentials.write(to: directory.appendingPathComponent("appstore").path)
        let sharedSecret = try #require(credentials.sharedSecret)
        var fakeConfiguration = FakeAppStoreConfiguration(bundleId: Samples.bundleId, credentials: credentials)
        var faults = FakeAppStoreFaults()
        faults.serverErrorRate = 0.15
        faults.rateLimitRate = 0.1
        faults.status21005Rate = 0.1
        faults.retryAfterDelay = .milliseconds(200)
        fakeConfiguration.faults = faults
        let fake = try FakeAppStore(configuration: fakeConfiguration)
        defer { fake.stop() }

        let root = directory.appendingPathComponent("root.pem").path
        try samples.pki.root.pemString.write(toFile: root, atomically: true, encoding: .utf8)
        let catalogue = BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path
        let overlay = """
        {"topics": {"partitions": 2}, "log": {"level": "debug"}, "retry": {"tierDelaysSeconds": [0.5, 0.5]},
         "fulfil": {"catalogue": "\(catalogue)"},
         "verify": {"trustRoots": ["\(root)", "\(files.rootCertificate)"], "bundleIds": ["\(Samples.bundleId)"],
                    "appReceiptMode": "verifyReceipt",
                    "serverApi": {"keyPath": "\(files.signingKey)", "keyId": "\(credentials.keyId)",
                                  "issuerId": "\(credentials.issuerId)", "bundleId": "\(Samples.bundleId)",
                                  "productionBaseURL": "\(fake.productionBaseURL)", "sandboxBaseURL": "\(fake.sandboxBaseURL)",
                                  "requestTimeoutSeconds": 5},
                    "verifyReceipt": {"sharedSecretPath": "\(try #require(files.sharedSecret))",
                                      "productionURL": "\(fake.productionVerifyReceiptURL)",
                                      "sandboxURL": "\(fake.sandboxVerifyReceiptURL)", "requestTimeoutSeconds": 5}}}
        """
        let rig = try DevRig(overlay: overlay, in: directory)
        try await rig.start()
        let logDirectory = try #require(rig.diagnostics.split(separator: "\n")
            .first { $0.contains("workers' logs in ") }.map { String($0.split(separator: " ").last!) })
        let kcat = Kcat(bootstrap: rig.bootstrap)

        // What must never be logged.
        let jws = try samples.pki.signer.sign(payload: samples.transaction(90_001))
        let forged = try samples.forger.signer.sign(payload: samples.transaction(90_002))
        var receipts: [String] = []
        var records: [(key: String, value: [UInt8])] = [
            samples.submission("s-valid", user: "u1", payload: jws),
            samples.submission("s-forged", user: "u2", payload: forged),
            samples.submission("s-unknown-id", user: "u3", kind: "transactionId", payload: "3999999999999999"),
            samples.submission("s-kind", user: "u4", kind: "bogusKind", payload: jws),
            (key: "k-nojson", value: Array("not json \(jws) \(sharedSecret)".utf8)),
            (key: "k-nouser", value: Array(#"{"schema":"receipt-submitted/v1","submissionId":"s-nouser","bundleId":"\#(Samples.bundleId)","kind":"signedTransaction","payload":"\#(jws)","submittedAt":"2026-11-30T06:00:00Z"}"#.utf8)),
        ]
        for index in 0..<4 {
            let customer = "c\(index)"
            let purchase = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                               customerId: customer, purchaseDate: Date().addingTimeInterval(-60))
            records.append(samples.submission("s-id-\(index)", user: "id\(index)", kind: "transactionId", payload: purchase.transactionId))
            let receipt = fake.store.makeReceipt(customerId: customer, environment: .production)
            receipts.append(receipt)
            records.append(samples.submission("s-receipt-\(index)", user: "r\(index)", kind: "appReceipt", payload: receipt))
        }
        try kcat.produce("receipts.submitted", records)
        try kcat.produce("receipts.ingested", [(key: "k-undecodable", value: Array("{\"payload\":\"\(jws)\",\"secret\":\"\(sharedSecret)\"}".utf8))])

        // Every path taken: an entitlement, rejections, retries and a dead letter.
        try await Self.waitUntil("the valid JWS fulfilled, the unknown id rejected after its retries, a dead letter",
                                 timeout: .seconds(120)) {
            let changed = try kcat.consume("entitlements.changed").map { $0.json["submissionId"] as? String }
            let rejected = try kcat.consume("receipts.rejected").map { $0.json["submissionId"] as? String }
            let dead = try kcat.consume("receipts.dead-letter").map(\.key)
            return changed.contains("s-valid") && rejected.contains("s-unknown-id") && dead.contains("k-undecodable")
        }
        let overlayPath = directory.appendingPathComponent("dev.json").path
        let replay = try Tool.run(CrashRestartTests.binary, ["replay", "--config", overlayPath, "--brokers", rig.bootstrap])
        #expect(replay.status == 0, "\(replay.output)")
        #expect(replay.output.contains("replayed"), "\(replay.output)")
        let printed = try Tool.run(CrashRestartTests.binary, ["config", "--config", overlayPath])
        #expect(printed.status == 0 && printed.output.contains(files.signingKey), "\(printed.output)")
        // The replayed record fails again (still undecodable): wait for its second dead letter.
        try await Self.waitUntil("the replayed record is dead-lettered again", timeout: .seconds(60)) {
            try kcat.consume("receipts.dead-letter").filter { $0.key == "k-undecodable" }.count >= 2
        }

        let rejected = try kcat.consume("receipts.rejected")
        let details = rejected.compactMap { $0.json["detail"] as? String }
        var logLines: [(String, String)] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: logDirectory) where file.hasSuffix(".log") {
            let text = try String(contentsOfFile: logDirectory + "/" + file, encoding: .utf8)
            logLines += text.split(separator: "\n").map { (file, String($0)) }
        }
        let stopped = try #require(await rig.stop(), "receiptd dev did not stop: \(rig.diagnostics)")
        #expect(stopped.normal && stopped.status == 0)
        logLines += rig.diagnostics.split(separator: "\n").map { ("dev", String($0)) }
        logLines += replay.output.split(separator: "\n").map { ("replay", String($0)) }
        logLines += printed.output.split(separator: "\n").map { ("config", String($0)) }

        // The scan is not vacuous: each path left its trace.
        let all = logLines.map(\.1).joined(separator: "\n")
        for trace in ["input rejected", "sending to a retry tier", "undecodable record dead-lettered", "stage.name\":\"verify",
                      "stage.name\":\"fulfil", "appstore-api-transaction-not-found", "error.reason", "replayed"] {
            #expect(all.contains(trace), "no log line shows \(trace)")
        }
        #expect(Set(rejected.compactMap { $0.json["reason"] as? String })
            .isSuperset(of: ["invalid-json", "missing-field", "unsupported-kind"]), "\(rejected.map(\.json))")
        #expect(details.count >= 4 && details.allSatisfy { !$0.isEmpty })
        #expect(fake.statistics.requests > 8, "the App Store was called")

        // What must not appear anywhere.
        let keyLines = try String(contentsOfFile: files.signingKey, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("-----") && $0.count >= 16 }.map(String.init)
        var secrets: [(String, String)] = [("shared secret", sharedSecret), ("JWT-shaped text", "eyJ")]
        for (label, token) in [("JWS", jws), ("forged JWS", forged)] {
            secrets.append((label, token))
            secrets += token.split(separator: ".").map { ("\(label) segment", String($0.prefix(48))) }
        }
        secrets += receipts.map { ("receipt", $0) } + receipts.map { ("receipt slice", String($0.dropFirst(8).prefix(24))) }
        secrets += keyLines.map { ("private key line", $0) }
        #expect(!keyLines.isEmpty && !receipts.isEmpty)
        for (label, secret) in secrets {
            for (source, line) in logLines where line.contains(secret) {
                Issue.record("\(label) in \(source): \(line.prefix(300))")
            }
            for detail in details where detail.contains(secret) {
                Issue.record("\(label) in a rejection detail: \(detail.prefix(300))")
            }
        }
    }

    static func waitUntil(_ what: String, timeout: Duration, _ condition: @escaping @Sendable () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? condition()) == true { return }
            try await Task.sleep(for: .milliseconds(500))
        }
        throw KcatError(description: "timed out: \(what)")
    }
}
