import AppStore
import FakeAppStore
import Foundation
import Pipeline
import Testing

/// The server side of the classic in-app-purchase regression list, through the real workers
/// (`receiptd dev`: the embedded broker, ingest, verify, fulfil and owners as processes), driven
/// with `kcat` as an app backend would, and checked on the topics and with `receiptd entitlements`:
/// first purchase; a non-consumable bought again (restored with a new transaction id: no second
/// grant); a first subscription with its expiry; a renewal delivered twice (and by notification)
/// granted once; a refund revokes; a restore on a new device emits nothing new; the App Store
/// answering 500 and then succeeding grants once.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Kcat.available, "kcat is not installed (scripts/setup installs it)")) struct PurchaseRegressionTests {
    static let user = "alice"

    @Test func theClassicChecklistThroughTheWorkers() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CrashRestartTests.binary), "build receiptd first")
        let directory = try scratchDirectory("receiptd-regression")
        defer { try? FileManager.default.removeItem(at: directory) }
        let apple = try Purchases()
        let credentials = try FakeAppStoreCredentials.generate()
        let files = try credentials.write(to: directory.appendingPathComponent("appstore").path)
        let fake = try FakeAppStore(configuration: FakeAppStoreConfiguration(bundleId: Samples.bundleId, credentials: credentials))
        defer { fake.stop() }
        let root = directory.appendingPathComponent("root.pem").path
        try apple.pki.root.pemString.write(toFile: root, atomically: true, encoding: .utf8)
        let catalogue = BrokerFixture.repository.appendingPathComponent("Config/catalogue.json").path
        let rig = try DevRig(overlay: """
        {"verify": {"trustRoots": ["\(root)", "\(files.rootCertificate)"], "bundleIds": ["\(Samples.bundleId)"],
                    "serverApi": {"keyPath": "\(files.signingKey)", "keyId": "\(credentials.keyId)",
                                  "issuerId": "\(credentials.issuerId)", "bundleId": "\(Samples.bundleId)",
                                  "productionBaseURL": "\(fake.productionBaseURL)", "sandboxBaseURL": "\(fake.sandboxBaseURL)",
                                  "requestTimeoutSeconds": 5}},
         "retry": {"tierDelaysSeconds": [1, 2, 4]},
         "topics": {"partitions": 4}, "fulfil": {"catalogue": "\(catalogue)"}}
        """, in: directory)
        try await rig.start()
        let pipe = RunningPipeline(kcat: Kcat(bootstrap: rig.bootstrap), rig: rig)

        // 1. First purchase: a consumable, granted once with its units.
        let coins = try apple.transaction("4100", product: "com.demo.coins.100", type: .consumable)
        var events = try await pipe.submit("first-purchase", coins, expect: 1)
        #expect(events.map(\.action) == ["grant"] && events.first?.json["quantity"] as? Int == 100)

        // 2. A non-consumable, then bought again: Apple restores it with a new transaction id.
        let pro = try apple.transaction("4200", product: "com.demo.unlock.pro", type: .nonConsumable)
        events = try await pipe.submit("pro", pro, expect: 1)
        #expect(events.map(\.action) == ["grant"])
        let restored = try apple.transaction("4201", original: "4200", product: "com.demo.unlock.pro", type: .nonConsumable)
        #expect(try await pipe.submitForOutcome("pro-again", restored) == "duplicate-suppressed")

        // 3. A first subscription with its expiry date.
        let start = apple.now.addingTimeInterval(-86_400)
        let month = try apple.transaction("4300", product: "com.demo.monthly.sub", type: .autoRenewable, purchase: start,
                                          expires: start.addingTimeInterval(30 * 86_400))
        events = try await pipe.submit("subscribe", month, expect: 1)
        #expect(events.map(\.action) == ["grant"])
        #expect(events.first?.json["validUntil"] as? String == ContractCoding.timestamp(start.addingTimeInterval(30 * 86_400)))

        // 4. The renewal, submitted twice by the app and once by Apple's notification: one renewal.
        let renewalStart = start.addingTimeInterval(30 * 86_400)
        let renewal = try apple.transaction("4301", original: "4300", product: "com.demo.monthly.sub", type: .autoRenewable,
                                            purchase: renewalStart, expires: renewalStart.addingTimeInterval(30 * 86_400), signedAgo: 50)
        events = try await pipe.submit("renew", renewal, expect: 1)
        #expect(events.map { $0.json["change"] as? String } == ["renewal"])
        #expect(try await pipe.submitForOutcome("renew-again", renewal) == "duplicate-suppressed")
        let didRenew = try apple.notification("DID_RENEW", nil, transaction: renewal.jws)
        #expect(try await pipe.submitForOutcome("renew-notified", didRenew, user: nil) == "duplicate-suppressed")

        // 5. A refund revokes (Apple's notification, which names no user).
        let refunded = try apple.transaction("4200", product: "com.demo.unlock.pro", type: .nonConsumable, revokedAgo: 40, signedAgo: 40)
        events = try await pipe.submit("refund", try apple.notification("REFUND", nil, transaction: refunded.jws), user: nil, expect: 1)
        #expect(events.map(\.action) == ["revoke"] && events.first?.json["userId"] as? String == Self.user)

        // 6. A restore on a new device: every transaction again, new submission ids, nothing new.
        for (index, transaction) in [coins, month, renewal].enumerated() {
            let outcome = try await pipe.submitForOutcome("new-device-\(index)", transaction)
            #expect(outcome == "duplicate-suppressed" || outcome == "stale-suppressed", "restore \(index): \(outcome)")
        }

        // 7. The App Store answers 500, then succeeds: one grant, through the retry tiers.
        let bought = fake.store.purchase(productId: "com.demo.coins.100", type: .consumable, environment: .production,
                                         purchaseDate: apple.now.addingTimeInterval(-60))
        var faults = FakeAppStoreFaults()
        faults.serverErrorRate = 1
        try fake.setFaults(faults)
        try pipe.kcat.produce(Topics().submitted, [Purchases.submission("flaky", user: Self.user, kind: "transactionId",
                                                                        payload: bought.transactionId)])
        let failed = await DevCommandTests.within(.seconds(60)) {
            while fake.statistics.serverErrors == 0 { try? await Task.sleep(for: .milliseconds(100)) }
            return true
        }
        #expect(failed == true, "the fake answered 500")
        try fake.setFaults(.none)
        events = try await pipe.events(for: "flaky", expect: 1)
        #expect(events.map(\.action) == ["grant"] && events.first?.json["transactionId"] as? String == bought.transactionId)

        // Every event once, and the owner's state as the support desk sees it.
        let all = try pipe.kcat.consume(Topics().entitlementsChanged)
        #expect(Set(all.map { $0.json["eventId"] as? String ?? "" }).count == all.count, "no event twice")
        let states = try await pipe.ownerStates(expecting: ["coins", "premium", "pro"])
        #expect(states["coins"]?["units"] as? Int == 200 && states["coins"]?["accessNow"] as? Bool == true)
        #expect(states["pro"]?["hasAccess"] as? Bool == false)
        #expect(states["premium"]?["accessNow"] as? Bool == true
            && states["premium"]?["validUntil"] as? String == ContractCoding.timestamp(renewalStart.addingTimeInterval(30 * 86_400)))

        let stopped = await rig.stop()
        #expect(stopped?.normal == true && stopped?.status == 0, "\(rig.diagnostics)")
    }
}

/// Signed transactions and notifications in Apple's shapes, with the test PKI the workers trust.
struct Purchases {
    let pki: TestPKI
    let now = Date()

    struct Signed {
        let transactionId: String
        let jws: String
    }

    init() throws {
        pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(86_400 * 30))
    }

    private func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// `signedAgo` minutes before now (inputs signed later are newer in Apple's order).
    func transaction(_ id: String, original: String? = nil, product: String, type: ProductType, purchase: Date? = nil,
                     expires: Date? = nil, revokedAgo: Double? = nil, signedAgo: Double = 60) throws -> Signed {
        let purchase = purchase ?? now.addingTimeInterval(-7200)
        var object: [String: Any] = [
            "transactionId": id, "originalTransactionId": original ?? id, "bundleId": Samples.bundleId, "productId": product,
            "purchaseDate": ms(purchase), "originalPurchaseDate": ms(purchase), "quantity": 1, "type": type.appleType,
            "inAppOwnershipType": "PURCHASED", "signedDate": ms(now.addingTimeInterval(-signedAgo * 60)), "environment": "Sandbox",
        ]
        if let expires { object["expiresDate"] = ms(expires) }
        if let revokedAgo {
            object["revocationDate"] = ms(now.addingTimeInterval(-revokedAgo * 60))
            object["revocationReason"] = 0
        }
        return Signed(transactionId: id, jws: try pki.signer.sign(payload: Array(try JSONSerialization.data(withJSONObject: object))))
    }

    func notification(_ type: String, _ subtype: String?, transaction: String, signedAgo: Double = 30) throws -> Signed {
        var object: [String: Any] = [
            "notificationType": type, "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": ms(now.addingTimeInterval(-signedAgo * 60)),
            "data": ["bundleId": Samples.bundleId, "bundleVersion": "1", "environment": "Sandbox", "signedTransactionInfo": transaction],
        ]
        if let subtype { object["subtype"] = subtype }
        return Signed(transactionId: "", jws: try pki.signer.sign(payload: Array(try JSONSerialization.data(withJSONObject: object))))
    }

    static func submission(_ id: String, user: String?, kind: String, payload: String) -> (key: String, value: [UInt8]) {
        var object: [String: Any] = ["schema": "receipt-submitted/v1", "submissionId": id, "bundleId": Samples.bundleId,
                                     "kind": kind, "payload": payload, "submittedAt": "2026-11-30T06:00:00Z"]
        if let user { object["userId"] = user }
        return (Samples.bundleId + "/" + (user ?? ""), Array(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys)))
    }
}

/// The running pipeline as the test sees it: produce with kcat, wait for each submission's verdict.
struct RunningPipeline {
    let kcat: Kcat
    let rig: DevRig
    let topics = Topics()

    struct Event {
        let json: [String: Any]
        var action: String { json["action"] as? String ?? "?" }
    }

    /// Submits a signed transaction (or notification) and waits for `expect` events of it.
    func submit(_ id: String, _ signed: Purchases.Signed, user: String? = PurchaseRegressionTests.user,
                expect count: Int) async throws -> [Event] {
        let kind = signed.transactionId.isEmpty ? "serverNotification" : "signedTransaction"
        try kcat.produce(topics.submitted, [Purchases.submission(id, user: user, kind: kind, payload: signed.jws)])
        return try await events(for: id, expect: count)
    }

    /// Submits and waits for the submission's outcome (`receipts.outcomes`), or says what it got instead.
    func submitForOutcome(_ id: String, _ signed: Purchases.Signed, user: String? = PurchaseRegressionTests.user) async throws -> String {
        let kind = signed.transactionId.isEmpty ? "serverNotification" : "signedTransaction"
        try kcat.produce(topics.submitted, [Purchases.submission(id, user: user, kind: kind, payload: signed.jws)])
        let verdict = try await first(for: id)
        return verdict.topic == topics.outcomes ? verdict.record.json["outcome"] as? String ?? "?" : "\(verdict.topic): \(verdict.record.value)"
    }

    /// The events of a submission, once `count` are there and nothing else has arrived for it.
    func events(for id: String, expect count: Int) async throws -> [Event] {
        let verdict = try await first(for: id)
        #expect(verdict.topic == topics.entitlementsChanged, "\(id): \(verdict.record.value)")
        let found = await DevCommandTests.within(.seconds(60)) {
            while true {
                let events = ((try? kcat.consume(topics.entitlementsChanged)) ?? []).filter { $0.json["submissionId"] as? String == id }
                if events.count >= count { return events }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        return try #require(found ?? nil, "\(id): fewer than \(count) events: \(rig.diagnostics)").map { Event(json: $0.json) }
    }

    /// The first verdict for a submission on the terminal topics.
    private func first(for id: String) async throws -> (topic: String, record: Kcat.Record) {
        let found = await DevCommandTests.within(.seconds(90)) {
            while true {
                for topic in [topics.entitlementsChanged, topics.outcomes, topics.rejected, topics.deadLetter] {
                    if let record = ((try? kcat.consume(topic)) ?? []).first(where: { $0.json["submissionId"] as? String == id }) {
                        return (topic, record)
                    }
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        return try #require(found ?? nil, "no verdict for \(id): \(rig.diagnostics)")
    }

    /// `receiptd entitlements` for the test's user, once it shows every entitlement in `names`.
    func ownerStates(expecting names: Set<String>) async throws -> [String: [String: Any]] {
        @Sendable func parse(_ lines: [String]) -> [String: [String: Any]] {
            Dictionary(lines.compactMap { line -> (String, [String: Any])? in
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                      let name = object["entitlement"] as? String else { return nil }
                return (name, object)
            }, uniquingKeysWith: { $1 })
        }
        let found = await DevCommandTests.within(.seconds(60)) {
            while true {
                let lines = (try? Self.entitlements(bootstrap: kcat.bootstrap, overlay: rig.overlay)) ?? []
                let states = parse(lines)
                if Set(states.keys) == names, states["coins"]?["units"] as? Int == 200 { return lines }
                try? await Task.sleep(for: .milliseconds(300))
            }
        }
        return parse(try #require(found ?? nil, "receiptd entitlements never showed \(names)"))
    }

    private static func entitlements(bootstrap: String, overlay: String) throws -> [String] {
        let (_, output) = try CrashRestartTests.runToCompletion(
            ["entitlements", "--bundle-id", Samples.bundleId, "--user-id", PurchaseRegressionTests.user,
             "--config", overlay, "--brokers", bootstrap])
        return output.split(separator: "\n").map(String.init)
    }
}
