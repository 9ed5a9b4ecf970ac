import Foundation
import Testing

/// `receiptd check` run as a process, the way operators use it (argument-parser's ExampleTests idea).
@Suite struct CheckCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let vectors = repository.deletingLastPathComponent().appendingPathComponent("shared/vectors/apple")

    static var binary: String {
        ProcessInfo.processInfo.environment["RECEIPTD_BINARY"] ?? repository.appendingPathComponent(".build/debug/receiptd").path
    }

    /// Runs `receiptd check` with `arguments`, feeding `input` on standard input.
    static func check(_ input: String, _ arguments: [String] = []) throws -> (status: Int32, lines: [[String: Any]], stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["check"] + arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
        return (process.terminationStatus, lines, String(decoding: err, as: UTF8.self))
    }

    static func submission(_ id: String, bundleId: String, kind: String = "signedTransaction", payload: String) -> String {
        let object: [String: Any] = ["schema": "receipt-submitted/v1", "submissionId": id, "userId": "u1", "bundleId": bundleId,
                                     "kind": kind, "payload": payload, "submittedAt": "2026-11-30T06:00:00Z"]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
    }

    @Test func realAppleTransactionsVerifyWithTheBundledRoot() throws {
        guard FileManager.default.fileExists(atPath: Self.vectors.path) else {
            print("SKIPPED: shared vectors not found at \(Self.vectors.path)")
            return
        }
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.vectors.appendingPathComponent("expected.json"))) as? [String: Any])
        let jws = try #require(expected["jws"] as? [String: [String: Any]])
        let transactions = jws.filter { ($0.value["kind"] as? String) == "transaction" }.sorted { $0.key < $1.key }
        #expect(transactions.count == 5)
        var input = ""
        for (name, entry) in transactions {
            let fields = try #require(entry["fields"] as? [String: Any])
            let payload = try String(contentsOf: Self.vectors.appendingPathComponent(entry["file"] as! String), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            input += Self.submission(name, bundleId: fields["bundleId"] as! String, payload: payload) + "\n"
        }
        let result = try Self.check(input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == transactions.count)
        for ((name, entry), line) in zip(transactions, result.lines) {
            let fields = entry["fields"] as! [String: Any]
            #expect(line["submissionId"] as? String == name)
            #expect(line["outcome"] as? String == "verified", "\(name): \(line)")
            let tx = try #require((line["transactions"] as? [[String: Any]])?.first)
            #expect(tx["transactionId"] as? String == fields["transactionId"] as? String)
            #expect(tx["originalTransactionId"] as? String == fields["originalTransactionId"] as? String)
            #expect(tx["productId"] as? String == fields["productId"] as? String)
            #expect(tx["environment"] as? String == fields["environment"] as? String)
            #expect((tx["signedDate"] as? String)?.hasSuffix("Z") == true)
            #expect(tx.keys.contains("revocationDate") && tx.keys.contains("expiresDate") && tx.keys.contains("appAccountToken"))
        }
        // 01a was refunded: the revocation date is reported.
        let refunded = try #require(result.lines.first { $0["submissionId"] as? String == "01a-sandbox-transaction-REFUNDED-revoked" })
        #expect((refunded["transactions"] as? [[String: Any]])?.first?["revocationDate"] as? String == "2025-10-16T05:19:59Z")
    }

    @Test func realAppleNotificationsVerifyWithTheirNestedTransactions() throws {
        guard FileManager.default.fileExists(atPath: Self.vectors.path) else {
            print("SKIPPED: shared vectors not found at \(Self.vectors.path)")
            return
        }
        func payload(_ name: String) throws -> String {
            try String(contentsOf: Self.vectors.appendingPathComponent("jws/\(name).jws"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let input = [
            Self.submission("refund", bundleId: "com.loki-project.loki-messenger", kind: "serverNotification",
                            payload: try payload("01-sandbox-notification-REFUND")),
            Self.submission("renew", bundleId: "com.loki-project.loki-messenger", kind: "serverNotification",
                            payload: try payload("02-sandbox-notification-DID_RENEW-2025")),
            Self.submission("test", bundleId: "com.Abilities", kind: "serverNotification",
                            payload: try payload("11-sandbox-notification-TEST")),
            Self.submission("renewal-info", bundleId: "com.loki-project.loki-messenger", kind: "signedRenewalInfo",
                            payload: try payload("02b-sandbox-renewalinfo-from-DID_RENEW")),
            Self.submission("other-app", bundleId: "com.example.game", kind: "serverNotification",
                            payload: try payload("01-sandbox-notification-REFUND")),
        ].joined(separator: "\n")
        let result = try Self.check(input)
        #expect(result.status == 0)
        #expect(result.lines.map { $0["outcome"] as? String } == ["verified", "verified", "verified", "verified", "rejected"])
        let refund = try #require((result.lines[0]["transactions"] as? [[String: Any]])?.first)
        #expect(refund["transactionId"] as? String == "2000001032604840")
        #expect(refund["revocationDate"] as? String == "2025-10-16T05:19:59Z")
        let source = try #require(refund["notification"] as? [String: Any])
        #expect(source["notificationType"] as? String == "REFUND")
        #expect(source["effect"] as? String == "revoke")
        let renew = try #require((result.lines[1]["transactions"] as? [[String: Any]])?.first)
        #expect(renew["transactionId"] as? String == "2000001024998954")
        #expect((renew["notification"] as? [String: Any])?["effect"] as? String == "transactionUpdate")
        #expect((result.lines[2]["transactions"] as? [Any])?.isEmpty == true)  // TEST: nothing nested
        #expect(result.lines[4]["reason"] as? String == "bundle-id-mismatch")
    }

    @Test func realLegacyReceiptsGetTheirREADMEVerdicts() throws {
        guard FileManager.default.fileExists(atPath: Self.vectors.path) else {
            print("SKIPPED: shared vectors not found at \(Self.vectors.path)")
            return
        }
        // file stem, bundle id, expected outcome, reason, number of transactions
        let cases: [(String, String, String, String?, Int)] = [
            ("r1-sandbox-g5-2025-dev.bonzer.weeka.app", "dev.bonzer.weeka.app", "verified", nil, 2),
            ("r2-production-g5-2024-org.getpure.pure-iphone", "org.getpure.pure-iphone", "verified", nil, 4),
            ("r3-sandbox-wwdrg1-sha1-2020-com.nutcall.alert", "com.nutcall.alert", "verified", nil, 187),
            ("r4-production-wwdrg1-sha1-2015-com.mustafadur.Kargotakip", "com.mustafadur.Kargotakip", "verified", "no-transactions", 0),
            ("r5-sandbox-g5-2025-com.XMCodey.apple.ClipTrace", "com.XMCodey.apple.ClipTrace", "verified", nil, 1),
            ("r6-xcode-storekit-testing-NOT-apple-signed", "net.zachariadis.cyclemaps", "rejected", "untrusted-root", 0),
            ("r1-sandbox-g5-2025-dev.bonzer.weeka.app", "com.example.other", "rejected", "bundle-id-mismatch", 0),
        ]
        var input = ""
        for (stem, bundleId, _, _, _) in cases {
            // Raw file content, line breaks included: ingest normalises the base64.
            let receipt = try String(contentsOf: Self.vectors.appendingPathComponent("receipts/\(stem).b64"), encoding: .utf8)
            input += Self.submission(stem, bundleId: bundleId, kind: "appReceipt", payload: receipt) + "\n"
        }
        let result = try Self.check(input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == cases.count)
        for ((stem, _, outcome, reason, count), line) in zip(cases, result.lines) {
            #expect(line["outcome"] as? String == outcome, "\(stem): \(line["detail"] ?? "")")
            #expect(line["reason"] as? String == reason, "\(stem)")
            #expect((line["transactions"] as? [Any])?.count == count, "\(stem)")
        }
        let r1 = try #require((result.lines[0]["transactions"] as? [[String: Any]])?.first)
        #expect(r1["transactionId"] as? String == "2000001092134138")
        #expect(r1["productId"] as? String == "dev.bonzer.weeka.app.subscription.pro.annual")
        #expect(r1["expiresDate"] as? String == "2025-12-26T18:19:07Z")
        #expect(r1["environment"] as? String == "Sandbox")
    }

    @Test func wrongParametersAndBadInputGetReasonCodes() throws {
        guard FileManager.default.fileExists(atPath: Self.vectors.path) else {
            print("SKIPPED: shared vectors not found at \(Self.vectors.path)")
            return
        }
        let jws = try String(contentsOf: Self.vectors.appendingPathComponent("jws/09a-production-transaction-from-CONSUMPTION_REQUEST.jws"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let foreignRoot = Self.vectors.appendingPathComponent("certs/AppleIncRootCertificate.pem").path
        let lines = [
            Self.submission("ok", bundleId: "com.jrjj.keysns", payload: jws),
            Self.submission("other-app", bundleId: "com.example.game", payload: jws),
            "{not json",
            Self.submission("not-a-notification", bundleId: "com.jrjj.keysns", kind: "serverNotification", payload: jws),
            Self.submission("shape", bundleId: "com.jrjj.keysns", payload: "abc"),
        ].joined(separator: "\n")
        let production = try Self.check(lines, ["--environment", "production"])
        #expect(production.status == 0)
        #expect(production.lines.map { $0["outcome"] as? String } == ["verified", "rejected", "rejected", "rejected", "rejected"])
        #expect(production.lines.map { $0["reason"] as? String } ==
                [nil, "bundle-id-mismatch", "invalid-json", "missing-field", "malformed-payload"])
        #expect(production.lines[2]["submissionId"] is NSNull)

        let sandbox = try Self.check(lines, ["--environment", "sandbox"])
        #expect(sandbox.lines.first?["reason"] as? String == "environment-mismatch")
        let otherBundle = try Self.check(lines, ["--bundle-id", "com.example.game"])
        #expect(otherBundle.lines.first?["reason"] as? String == "bundle-id-mismatch")
        let foreign = try Self.check(lines, ["--trust-root", foreignRoot])
        #expect(foreign.lines.first?["reason"] as? String == "untrusted-root")
    }

    @Test func usageErrorsExitNonZeroWithAMessage() throws {
        let result = try Self.check("", ["--environment", "staging"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--environment must be production, sandbox or any"))
        let missing = try Self.check("", ["/nonexistent/input.jsonl"])
        #expect(missing.status == 64)
    }
}
