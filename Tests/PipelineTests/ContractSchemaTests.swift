import AppStore
import Foundation
import Testing
@testable import Pipeline

/// Every message receiptd writes, validated against its schema in `Config/schemas/` by a real
/// validator (python3-jsonschema's `Draft202012Validator`, formats checked; see
/// ``JSONSchemaValidator``): the realistic samples must pass, and every broken sample must fail
/// for the reason it was broken for, so the suite cannot pass by validating nothing.
@Suite(.enabled(if: JSONSchemaValidator.isAvailable,
                "needs /usr/bin/python3 with jsonschema: apt-get install python3-jsonschema (scripts/setup does)"))
struct ContractSchemaTests {
    @Test func everySampleMatchesItsSchema() async throws {
        let cases = try await ContractSamples.make().cases()
        // Closed: a copy of each schema without room for unknown members, so a member the
        // encoder writes but the schema does not describe fails.
        let closed = cases.map { item in
            var item = item
            item.id += " (closed)"
            item.closed = true
            return item
        }
        // Open: a member from a future version is accepted (forward compatibility).
        let ingested = try #require(cases.first { $0.schema == "receipt-ingested.v1" })
        let future = JSONSchemaValidator.Case(
            id: "receipt-ingested.v1 with a future member", schema: "receipt-ingested.v1",
            json: try JSONEdit.setting(["traceId"], to: ["w3c": "00-4bf92f35"], in: ingested.json))
        let all = cases + closed + [future]

        let report = try JSONSchemaValidator.validate(all)

        #expect(report.schemaErrors.isEmpty, "not valid Draft 2020-12: \(report.schemaErrors)")
        #expect(Set(all.map(\.schema)).count == ContractSchemaFileTests.contracts.count)
        for item in all {
            let errors = try #require(report.results[item.id], "no result for \(item.id)")
            #expect(errors.isEmpty, "\(item.id): \(errors)\n\(String(decoding: item.json, as: UTF8.self))")
        }
    }

    @Test func brokenSamplesFailForTheirReason() async throws {
        let broken = try BrokenSample.all(from: try await ContractSamples.make())

        let report = try JSONSchemaValidator.validate(broken.map(\.case))

        for sample in broken {
            let errors = try #require(report.results[sample.case.id], "no result for \(sample.case.id)")
            #expect(errors.contains { $0.hasPrefix(sample.expected) },
                    "\(sample.case.id): expected an error starting \"\(sample.expected)\", got \(errors)")
        }
    }
}

/// A real sample with one thing broken, and the start of the error the validator must report
/// (`<instance path>: <message>`).
struct BrokenSample {
    var `case`: JSONSchemaValidator.Case
    var expected: String

    static func all(from samples: ContractSamples) throws -> [BrokenSample] {
        var broken: [BrokenSample] = []
        func add(_ schema: String, _ what: String, _ json: [UInt8], closed: Bool = false, expect: String) {
            broken.append(BrokenSample(case: JSONSchemaValidator.Case(id: "\(schema): \(what)", schema: schema, json: json,
                                                                      closed: closed), expected: expect))
        }
        func first<T>(_ items: [T], _ what: String, where predicate: (T) -> Bool) throws -> T {
            guard let item = items.first(where: predicate) else { throw SampleError("no sample with \(what)") }
            return item
        }

        let submitted = samples.submitted[0], appReceipt = samples.submitted[2], lookup = samples.submitted[3]
        let schema = "receipt-submitted.v1"
        add(schema, "signedTransaction without userId", try JSONEdit.removing(["userId"], in: submitted),
            expect: "(root): 'userId' is a required property")
        add(schema, "signedTransaction with empty userId", try JSONEdit.setting(["userId"], to: "", in: submitted),
            expect: "userId: '' is too short")
        add(schema, "signedTransaction with blank userId", try JSONEdit.setting(["userId"], to: "  ", in: submitted),
            expect: "userId: '  ' does not match")
        add(schema, "appReceipt with null userId", try JSONEdit.setting(["userId"], to: NSNull(), in: appReceipt),
            expect: "userId: None is not of type 'string'")
        add(schema, "unknown kind", try JSONEdit.setting(["kind"], to: "signedTransactions", in: submitted),
            expect: "kind: 'signedTransactions' is not one of")
        add(schema, "transactionId payload not digits", try JSONEdit.setting(["payload"], to: "2000-0008", in: lookup),
            expect: "payload: '2000-0008' does not match")
        add(schema, "submittedAt not RFC 3339", try JSONEdit.setting(["submittedAt"], to: "30/11/2026 05:59", in: submitted),
            expect: "submittedAt: '30/11/2026 05:59' does not match")

        let ingested = try ContractCoding.encode(try first(samples.ingested, "a user") { !$0.userId.isEmpty })
        add("receipt-ingested.v1", "no payloadSHA256", try JSONEdit.removing(["payloadSHA256"], in: ingested),
            expect: "(root): 'payloadSHA256' is a required property")
        add("receipt-ingested.v1", "whole second with a fraction",
            try JSONEdit.setting(["ingestedAt"], to: "2026-12-30T06:00:00.000Z", in: ingested),
            expect: "ingestedAt: '2026-12-30T06:00:00.000Z' does not match")
        add("receipt-ingested.v1", "signedTransaction with empty userId", try JSONEdit.setting(["userId"], to: "", in: ingested),
            expect: "userId: '' is too short")
        add("receipt-ingested.v1", "undocumented member (closed)", try JSONEdit.setting(["extra"], to: 1, in: ingested),
            closed: true, expect: "(root): Additional properties are not allowed ('extra' was unexpected)")

        let notified = try ContractCoding.encode(try first(samples.verified, "a notification") {
            $0.transaction.notification != nil
        })
        add("receipt-verified.v1", "unknown effect",
            try JSONEdit.setting(["transaction", "notification", "effect"], to: "refund", in: notified),
            expect: "transaction/notification/effect: 'refund' is not one of")
        add("receipt-verified.v1", "transaction without type", try JSONEdit.removing(["transaction", "type"], in: notified),
            expect: "transaction: 'type' is a required property")
        add("receipt-verified.v1", "quantity as text", try JSONEdit.setting(["transaction", "quantity"], to: "1", in: notified),
            expect: "transaction/quantity: '1' is not of type 'integer'")

        let rejectedBase64 = try ContractCoding.encode(try first(samples.rejected, "base64") { $0.originalEncoding == .base64 })
        add("receipt-rejected.v1", "unknown stage", try JSONEdit.setting(["stage"], to: "publish", in: rejectedBase64),
            expect: "stage: 'publish' is not one of")
        add("receipt-rejected.v1", "base64 original that is not base64",
            try JSONEdit.setting(["original"], to: "not base64!", in: rejectedBase64),
            expect: "original: 'not base64!' does not match")
        add("receipt-rejected.v1", "reason not kebab-case",
            try JSONEdit.setting(["reason"], to: "Invalid UTF8", in: rejectedBase64),
            expect: "reason: 'Invalid UTF8' does not match")

        let outcome = try ContractCoding.encode(samples.outcomes[0])
        add("receipt-outcome.v1", "unknown outcome", try JSONEdit.setting(["outcome"], to: "lost", in: outcome),
            expect: "outcome: 'lost' is not one of")
        add("receipt-outcome.v1", "no at", try JSONEdit.removing(["at"], in: outcome),
            expect: "(root): 'at' is a required property")

        let change = try ContractCoding.encode(try first(samples.changes, "validUntil") { $0.validUntil != nil })
        add("entitlement-changed.v2", "unknown change", try JSONEdit.setting(["change"], to: "cancel", in: change),
            expect: "change: 'cancel' is not one of")
        add("entitlement-changed.v2", "unknown action", try JSONEdit.setting(["action"], to: "suspend", in: change),
            expect: "action: 'suspend' is not one of")
        add("entitlement-changed.v2", "unknown purchase status",
            try JSONEdit.setting(["purchase", "status"], to: "paused", in: change),
            expect: "purchase/status: 'paused' is not one of")
        add("entitlement-changed.v2", "no hasAccess", try JSONEdit.removing(["hasAccess"], in: change),
            expect: "(root): 'hasAccess' is a required property")
        add("entitlement-changed.v2", "unknown expirationReason",
            try JSONEdit.setting(["expirationReason"], to: "bored", in: change),
            expect: "expirationReason: 'bored' is not one of")
        add("entitlement-changed.v2", "eventId not a SHA-256", try JSONEdit.setting(["eventId"], to: "EVT-1", in: change),
            expect: "eventId: 'EVT-1' does not match")
        // The pattern admits 30 February; only the date-time format check refuses it.
        add("entitlement-changed.v2", "no such day", try JSONEdit.setting(["validUntil"], to: "2027-02-30T05:00:00Z", in: change),
            expect: "validUntil: '2027-02-30T05:00:00Z' is not a 'date-time'")

        let update = try ContractCoding.encode(samples.ownerUpdates[0])
        add("owner-purchase.v1", "version as text", try JSONEdit.setting(["purchase", "version"], to: "3", in: update),
            expect: "purchase/version: '3' is not of type 'integer'")
        add("owner-purchase.v1", "no userId", try JSONEdit.removing(["userId"], in: update),
            expect: "(root): 'userId' is a required property")

        let state = try ContractCoding.encode(try first(samples.states, "purchases") { !$0.purchases.isEmpty })
        add("entitlement-state.v1", "unknown product type",
            try JSONEdit.setting(["purchases", "0", "productType"], to: "subscription", in: state),
            expect: "purchases/0/productType: 'subscription' is not one of")
        add("entitlement-state.v1", "validUntil a number", try JSONEdit.setting(["validUntil"], to: 5, in: state),
            expect: "validUntil: 5 is not of type 'string', 'null'")
        return broken
    }
}

/// Checks of the schema files and samples that need no validator: each file names its contract,
/// documents and requires every member the encoder writes, lists exactly the Swift vocabularies,
/// and shares its common shapes word for word with the other files.
@Suite struct ContractSchemaFileTests {
    static let contracts: [(file: String, schema: String)] = [
        ("receipt-submitted.v1", ReceiptSubmitted.schema), ("receipt-ingested.v1", IngestedSubmission.schema),
        ("receipt-verified.v1", ReceiptVerified.schema), ("receipt-rejected.v1", ReceiptRejected.schema),
        ("receipt-outcome.v1", ReceiptOutcome.schema), ("entitlement-changed.v2", EntitlementChanged.schema),
        ("owner-purchase.v1", OwnerPurchaseUpdate.schema), ("entitlement-state.v1", EntitlementState.schema),
        ("consumption-request.v1", ConsumptionRequest.schema), ("consumption-answer.v1", ConsumptionAnswer.schema),
        ("consumption-outcome.v1", ConsumptionOutcome.schema),
    ]

    static func load(_ file: String) throws -> JSONValue {
        let url = JSONSchemaValidator.schemaDirectory.appendingPathComponent("\(file).schema.json")
        return try JSONParser.parse(Array(try Data(contentsOf: url)), maxDepth: 64)
    }

    /// The root and every `$defs` entry that describes an object, by path.
    static func objectSchemas(_ document: JSONValue) -> [(String, JSONValue)] {
        let defs = document["$defs"]?.objectValue ?? [:]
        return [("(root)", document)] + defs.sorted { $0.key < $1.key }.filter { $0.value["properties"] != nil }
            .map { ("$defs/\($0.key)", $0.value) }
    }

    @Test func eachFileNamesItsContract() throws {
        for (file, schema) in Self.contracts {
            let document = try Self.load(file)
            #expect(file == schema.replacingOccurrences(of: "/", with: "."))
            #expect(document["$schema"]?.stringValue == "https://json-schema.org/draft/2020-12/schema", "\(file)")
            #expect(document["$id"]?.stringValue == "https://receiptd.dev/schemas/\(schema)", "\(file)")
            #expect(document["title"]?.stringValue == schema, "\(file)")
            #expect(document["properties"]?["schema"]?["const"]?.stringValue == schema, "\(file)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: JSONSchemaValidator.schemaDirectory.path)
            .filter { $0.hasSuffix(".schema.json") }
        #expect(Set(files) == Set(Self.contracts.map { "\($0.file).schema.json" }))
    }

    @Test func everyMemberIsDescribedRequiredAndOpen() throws {
        for (file, _) in Self.contracts {
            for (path, node) in Self.objectSchemas(try Self.load(file)) {
                let properties = node["properties"]?.objectValue ?? [:]
                let required = Set(node["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
                // The input is the one contract whose producers may leave a member out.
                let optional: Set<String> = file == "receipt-submitted.v1" && path == "(root)" ? ["userId"] : []
                #expect(required == Set(properties.keys).subtracting(optional), "\(file) \(path)")
                #expect(node["additionalProperties"] == .bool(true), "\(file) \(path)")
                #expect(node["description"]?.stringValue?.isEmpty == false, "\(file) \(path)")
                for (name, member) in properties {
                    #expect(member["description"]?.stringValue?.isEmpty == false, "\(file) \(path) \(name)")
                }
            }
        }
    }

    @Test func encodedSamplesHaveExactlyTheDescribedMembers() async throws {
        for item in try await ContractSamples.make().cases() where item.schema != "receipt-submitted.v1" {
            let members = try JSONParser.parse(item.json, maxDepth: 64).objectValue?.keys
            let described = try Self.load(item.schema)["properties"]?.objectValue?.keys
            #expect(members.map(Set.init) == described.map(Set.init), "\(item.id)")
        }
    }

    @Test func sharedShapesAreIdenticalInEveryFile() throws {
        var first: [String: (file: String, shape: JSONValue)] = [:]
        for (file, _) in Self.contracts {
            for (name, shape) in try Self.load(file)["$defs"]?.objectValue ?? [:] {
                if let seen = first[name] {
                    #expect(seen.shape == shape, "$defs/\(name) differs between \(seen.file) and \(file)")
                } else {
                    first[name] = (file, shape)
                }
            }
        }
        #expect(Set(first.keys).isSuperset(of: ["PurchaseState", "OwnerPurchase", "VerifiedTransaction", "NotificationSource",
                                               "RenewalSnapshot", "Timestamp", "NullableTimestamp"]))
    }

    @Test func enumsAreTheSwiftVocabularies() throws {
        func values(_ file: String, _ path: String...) throws -> [String] {
            var node: JSONValue? = try Self.load(file)
            for key in path { node = node?[key] }
            return node?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
        let changed = "entitlement-changed.v2"
        #expect(try values(changed, "properties", "change") == EntitlementChangeKind.allCases.map(\.rawValue))
        #expect(try values(changed, "properties", "action") == EntitlementAction.allCases.map(\.rawValue))
        #expect(try values(changed, "$defs", "PurchaseStatus") == PurchaseStatus.allCases.map(\.rawValue))
        #expect(try values(changed, "$defs", "ProductType") == ProductType.allCases.map(\.rawValue))
        #expect(try values("receipt-submitted.v1", "$defs", "SubmissionKind") == SubmissionKind.allCases.map(\.rawValue))
        #expect(try values("receipt-rejected.v1", "$defs", "StageName") == StageName.allCases.map(\.rawValue))
        #expect(try values("receipt-verified.v1", "$defs", "NotificationSource", "properties", "effect")
            == Story.everyEffect.map(\.name))
        #expect(try values("consumption-outcome.v1", "properties", "outcome") == ConsumptionOutcome.Kind.allCases.map(\.rawValue))
        #expect(try values("receipt-outcome.v1", "properties", "outcome")
            == [OutcomeCode.duplicateSuppressed, .staleSuppressed, .notificationInformational, .noTransactions].map(\.rawValue))
    }

    @Test func samplesCoverEveryCase() async throws {
        let samples = try await ContractSamples.make()
        let statuses = samples.changes.map(\.status) + samples.changes.map(\.purchase.status)
            + samples.ownerUpdates.map(\.purchase.status) + samples.states.flatMap { $0.purchases.map(\.status) }
        #expect(Set(statuses) == Set(PurchaseStatus.allCases))
        #expect(Set(samples.changes.map(\.change)) == Set(EntitlementChangeKind.allCases))
        #expect(Set(samples.changes.map(\.action)) == Set(EntitlementAction.allCases))
        #expect(Set(samples.changes.map(\.productType)) == Set(ProductType.allCases))
        #expect(Set(samples.ingested.map(\.kind)) == Set(SubmissionKind.allCases))
        #expect(Set(samples.rejected.map(\.stage) + samples.outcomes.map(\.stage)) == Set(StageName.allCases))
        #expect(Set(samples.outcomes.map(\.outcome))
            == [.duplicateSuppressed, .staleSuppressed, .notificationInformational, .noTransactions])
        #expect(Set(samples.verified.compactMap(\.transaction.notification?.effect)) == Set(Story.everyEffect.map(\.name)))
        #expect(Set(samples.rejected.map(\.originalEncoding)) == [.utf8, .base64])
        #expect(samples.rejected.contains { $0.originalTruncated })
        #expect(samples.ingested.contains { $0.kind == .serverNotification && $0.userId.isEmpty })
        #expect(samples.changes.contains { $0.purchase.accessWithheld != nil })
        #expect(samples.changes.contains { $0.notificationType != nil })
        #expect(samples.changes.contains { $0.notificationType == nil })
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? { objectValue?[key] }

    var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value.members }
        return nil
    }

    var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
