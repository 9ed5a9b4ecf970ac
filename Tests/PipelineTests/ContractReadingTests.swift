import AppStore
import Foundation
import Testing
@testable import Pipeline

/// The direct reading path (``ContractReadable``) against the Codable path it replaces on the
/// stages' inputs: equal values for every document the Codable path accepts, and for every
/// document it refuses the same `DecodingError` (case, type, coding path, description), hence the
/// same dead-letter message. The refusals come from a corpus generated from fully populated
/// documents: each member removed, nulled, or replaced by a value of every JSON type, an
/// out-of-range number, a bad timestamp or an unknown enum value, at every nesting depth.
@Suite struct ContractReadingTests {
    static let date = ContractCoding.date(from: "2026-11-30T06:00:00.123Z")!

    static let renewal = RenewalSnapshot(autoRenew: true, autoRenewProductId: "com.example.yearly", expirationIntent: 2,
                                         gracePeriodExpiresDate: date.addingTimeInterval(86_400), isInBillingRetryPeriod: false)
    static let notification = NotificationSource(notificationType: "DID_RENEW", subtype: "BILLING_RECOVERY",
                                                 notificationUUID: "9f1c", effect: "transactionUpdate",
                                                 signedDate: date.addingTimeInterval(1), renewal: renewal)
    static let transaction = VerifiedTransaction(
        transactionId: "2000000000000002", originalTransactionId: "2000000000000001", bundleId: "com.example.game",
        productId: "com.example.monthly", type: "Auto-Renewable Subscription", quantity: 3, purchaseDate: date,
        expiresDate: date.addingTimeInterval(2_592_000), revocationDate: date.addingTimeInterval(60), revocationReason: 1,
        environment: "Sandbox", signedDate: date.addingTimeInterval(2), appAccountToken: "6f9b-…", isUpgraded: true,
        ownershipType: "FAMILY_SHARED", notification: notification)
    static let verified = ReceiptVerified(submissionId: "sub-1", bundleId: "com.example.game", userId: "user-ü",
                                          kind: .serverNotification, verifiedAt: date, transaction: transaction)
    static let ingested = IngestedSubmission(submissionId: "sub-1", bundleId: "com.example.game", userId: "u\"1\\",
                                             kind: .signedTransaction, payload: Fixtures.jws,
                                             submittedAt: date, ingestedAt: date.addingTimeInterval(0.5))
    static let ownerUpdate = OwnerPurchaseUpdate(
        owner: OwnerKey(bundleId: "com.example.game", userId: "user-1"), entitlement: "premium",
        purchase: OwnerPurchase(originalTransactionId: "2000000000000001", productId: "com.example.monthly",
                                productType: .nonRenewing, status: .gracePeriod, hasAccess: true, validUntil: date,
                                periodStart: date.addingTimeInterval(-60), durationMonths: 6, quantity: 2,
                                ownershipType: "PURCHASED", environment: "Production", changedAt: date, version: 7))

    /// Each stage input with every optional nil (written as `null`).
    static let sparseVerified = ReceiptVerified(
        submissionId: "s", bundleId: "b", userId: "", kind: .appReceipt, verifiedAt: date,
        transaction: VerifiedTransaction(transactionId: "1", originalTransactionId: "1", bundleId: "b", productId: "p",
                                         type: "Consumable", purchaseDate: nil, signedDate: nil))
    static let sparseOwnerUpdate = OwnerPurchaseUpdate(
        owner: OwnerKey(bundleId: "b", userId: "u"), entitlement: "e",
        purchase: OwnerPurchase(originalTransactionId: "1", productId: "p", productType: .consumable, status: .revoked,
                                hasAccess: false, validUntil: nil, periodStart: nil, durationMonths: nil, quantity: nil,
                                ownershipType: "PURCHASED", environment: "Sandbox", changedAt: nil, version: 0))

    // MARK: Outcomes of both paths, comparable

    enum Outcome: Equatable, CustomStringConvertible {
        case value([UInt8])
        case failure(String)

        var description: String {
            switch self {
            case .value(let bytes): "value \(String(decoding: bytes, as: UTF8.self))"
            case .failure(let error): "failure \(error)"
            }
        }
    }

    /// Everything a caller can see of a `DecodingError`, plus the runner's dead-letter summary.
    static func describe(_ error: any Error) -> String {
        let summary = StageRunner<VerifyStage>.summary(of: error)
        guard let decoding = error as? DecodingError else { return "not a DecodingError: \(error)" }
        func path(_ context: DecodingError.Context) -> String { context.codingPath.map(\.stringValue).joined(separator: ".") }
        switch decoding {
        case .keyNotFound(let key, let context):
            return "keyNotFound(\(key.stringValue)) at [\(path(context))] \(context.debugDescription) | \(summary)"
        case .valueNotFound(let type, let context):
            return "valueNotFound(\(type)) at [\(path(context))] \(context.debugDescription) | \(summary)"
        case .typeMismatch(let type, let context):
            return "typeMismatch(\(type)) at [\(path(context))] \(context.debugDescription) | \(summary)"
        case .dataCorrupted(let context):
            return "dataCorrupted at [\(path(context))] \(context.debugDescription) | \(summary)"
        @unknown default:
            return "unknown \(decoding)"
        }
    }

    static func outcome<T: Codable>(_ read: () throws -> T) -> Outcome {
        do { return .value(try ContractCoding.encode(try read())) } catch { return .failure(describe(error)) }
    }

    /// Both paths over one document: the direct one (through ``ContractCoding/decode(_:from:)``)
    /// and the Codable reference.
    static func bothPaths<T: Codable & Equatable>(_ type: T.Type, _ bytes: [UInt8]) -> (direct: Outcome, codable: Outcome) {
        (outcome { try ContractCoding.decode(type, from: bytes) }, outcome { try ContractJSONDecoder.decode(type, from: bytes) })
    }

    // MARK: Accepted documents

    @Test func theStageInputsTakeTheDirectPath() {
        let types: [Any.Type] = [IngestedSubmission.self, ReceiptVerified.self, VerifiedTransaction.self, NotificationSource.self,
                                 RenewalSnapshot.self, OwnerPurchaseUpdate.self, OwnerPurchase.self]
        for type in types { #expect(type is any ContractReadable.Type, "\(type)") }
    }

    /// What the stages write, they read over a tape, not a parsed tree (``JSONTape`` leaves no
    /// member name of theirs to the parser).
    @Test func theStageInputsAreReadOverATape() throws {
        let inputs: [any Encodable] = [Self.ingested, Self.verified, Self.ownerUpdate, Self.sparseVerified, Self.sparseOwnerUpdate]
        for input in inputs {
            let bytes = try ContractCoding.encode(input)
            #expect(JSONTape(bytes, maxDepth: ContractJSONDecoder.maxDepth) != nil, "\(type(of: input))")
        }
    }

    static func expectEqualValues<T: Codable & Equatable>(_ value: T) throws {
        let bytes = try ContractCoding.encode(value)
        let readable = try #require(T.self as? any ContractReadable.Type)
        let direct = try ContractJSONDecoder.read(readable, from: bytes)
        #expect(direct as? T == value)
        #expect(try ContractJSONDecoder.decode(T.self, from: bytes) == value)
        #expect(try ContractCoding.decode(T.self, from: bytes) == value)
    }

    @Test func fullyPopulatedAndSparseValuesReadAsTheCodablePathReadsThem() throws {
        try Self.expectEqualValues(Self.ingested)
        try Self.expectEqualValues(Self.verified)
        try Self.expectEqualValues(Self.sparseVerified)
        try Self.expectEqualValues(Self.ownerUpdate)
        try Self.expectEqualValues(Self.sparseOwnerUpdate)
        try Self.expectEqualValues(Self.transaction)
        try Self.expectEqualValues(Self.notification)
        try Self.expectEqualValues(Self.renewal)
        try Self.expectEqualValues(RenewalSnapshot())
    }

    /// An ingested payload read over a tape stays the record's bytes, which verify hands to the
    /// verifier without a `String` of them, and reads as the text it was written from; a payload
    /// with an escape or a non-ASCII byte is decoded into a `String` as before.
    @Test func anIngestedPayloadStaysTheRecordsBytes() throws {
        let bytes = try ContractCoding.encode(Self.ingested)
        let read = try ContractJSONDecoder.read(IngestedSubmission.self, from: bytes)
        #expect(read.withPayloadUTF8 { Array($0) } == Array(Fixtures.jws.utf8))
        let inRecord = bytes.withUnsafeBufferPointer { record in
            read.withPayloadUTF8 { $0.baseAddress! >= record.baseAddress! && $0.baseAddress! + $0.count <= record.baseAddress! + record.count }
        }
        #expect(inRecord, "the payload was copied out of the record")
        #expect(read.payload == Fixtures.jws && read == Self.ingested)

        var escaped = Self.ingested
        escaped.payload = "a/b\"c.\u{E9}"
        let reread = try ContractJSONDecoder.read(IngestedSubmission.self, from: try ContractCoding.encode(escaped))
        #expect(reread.payload == "a/b\"c.\u{E9}" && reread == escaped)
        #expect(reread.withPayloadUTF8 { Array($0) } == Array("a/b\"c.\u{E9}".utf8))
    }

    /// Text held as a record's bytes equals text held as a `String` exactly when the strings are
    /// equal, `String`'s canonical equivalence included (U+212A KELVIN SIGN is `K`).
    @Test func recordTextComparesAsStrings() {
        let ascii = RecordText(ascii: ArraySlice(Array("xK".utf8)))
        #expect(ascii == RecordText("xK") && RecordText("xK") == ascii)
        #expect(ascii == RecordText("x\u{212A}"))
        #expect(ascii != RecordText("xk") && ascii != RecordText(ascii: ArraySlice(Array("xk".utf8))))
        #expect(ascii == RecordText(ascii: Array("axK".utf8)[1...]))
        #expect(ascii.string == "xK" && ascii.utf8Count == 2)
    }

    @Test func everyContractSampleReadsAsTheCodablePathReadsIt() async throws {
        let samples = try await ContractSamples.make()
        for value in samples.ingested { try Self.expectEqualValues(value) }
        for value in samples.verified { try Self.expectEqualValues(value) }
        for value in samples.ownerUpdates { try Self.expectEqualValues(value) }
        #expect(samples.verified.count > 10 && samples.ownerUpdates.count > 5)
    }

    @Test func absentOptionalsReadAsNullOnes() throws {
        for (type, bytes) in [(0, try ContractCoding.encode(Self.sparseVerified)), (1, try ContractCoding.encode(Self.sparseOwnerUpdate))] {
            let stripped = try Self.render(Self.removingNulls(JSONParser.parse(bytes, maxDepth: 32)))
            let (direct, codable) = type == 0 ? Self.bothPaths(ReceiptVerified.self, stripped) : Self.bothPaths(OwnerPurchaseUpdate.self, stripped)
            #expect(direct == codable)
            #expect(direct == .value(bytes))
        }
    }

    // MARK: The corpus

    /// Values every member is replaced by, in turn: each JSON type, integers at and beyond the
    /// edges, integral and fractional numbers, timestamps good and bad, an unknown enum value.
    static let replacements: [JSONValue] = [
        .null, .bool(true), .bool(false), .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .number(3.0), .number(1.5), .number(1e300), .number(-9.3e18), .string(""), .string("bogus"),
        .string("2026-11-30T06:00:00Z"), .string("2026-11-30T06:00:00.5+02:00"), .string("2026-13-01T00:00:00Z"),
        .string("10000-01-01T00:00:00Z"), .string("active"), .string("autoRenewable"), .string("appReceipt"),
        .string("receipt-verified/v1"), .string("receipt-ingested/v1"), .string("owner-purchase/v1"),
        .array([]), .array([.string("x")]), .object(JSONObject()), .object(JSONObject(members: ["x": .integer(1)])),
    ]

    /// Every variant of `value`: at each object (the root and each nested one), each member
    /// removed or replaced, and an unknown member added; plus roots that are not objects.
    static func variants(of value: JSONValue) -> [JSONValue] {
        guard case .object(let object) = value else { return [] }
        var result: [JSONValue] = [.object(JSONObject(members: object.members.merging(["future": .string("x")]) { $1 }))]
        for key in object.members.keys.sorted() {
            var removed = object.members
            removed[key] = nil
            result.append(.object(JSONObject(members: removed)))
            for replacement in replacements {
                var replaced = object.members
                replaced[key] = replacement
                result.append(.object(JSONObject(members: replaced)))
            }
            for nested in variants(of: object.members[key]!) {
                var replaced = object.members
                replaced[key] = nested
                result.append(.object(JSONObject(members: replaced)))
            }
        }
        return result
    }

    static let notObjects: [[UInt8]] = ["null", "[]", "\"x\"", "1", "true", "{", "{\"a\":1,\"a\":2}", "{} x", ""].map { Array($0.utf8) }

    static func expectSameOutcomes<T: Codable & Equatable>(_ type: T.Type, from seed: T) throws -> (accepted: Int, refused: Int) {
        let root = try JSONParser.parse(try ContractCoding.encode(seed), maxDepth: 32)
        var accepted = 0, refused = 0
        for bytes in try variants(of: root).map(render) + notObjects {
            let (direct, codable) = bothPaths(type, bytes)
            #expect(direct == codable, "\(String(decoding: bytes, as: UTF8.self))")
            if case .value = codable { accepted += 1 } else { refused += 1 }
        }
        return (accepted, refused)
    }

    @Test func generatedDocumentsAreAcceptedOrRefusedAlikeWithTheSameError() throws {
        let ingested = try Self.expectSameOutcomes(IngestedSubmission.self, from: Self.ingested)
        let verified = try Self.expectSameOutcomes(ReceiptVerified.self, from: Self.verified)
        let sparse = try Self.expectSameOutcomes(ReceiptVerified.self, from: Self.sparseVerified)
        let owner = try Self.expectSameOutcomes(OwnerPurchaseUpdate.self, from: Self.ownerUpdate)
        let sparseOwner = try Self.expectSameOutcomes(OwnerPurchaseUpdate.self, from: Self.sparseOwnerUpdate)
        for counts in [ingested, verified, sparse, owner, sparseOwner] {
            #expect(counts.accepted > 5 && counts.refused > 100, "\(counts)")
        }
    }

    @Test func refusalsNameTheNestedMember() {
        let bytes = try! ContractCoding.encode(Self.verified)
        let text = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"expirationIntent\":2", with: "\"expirationIntent\":2.5")
        let (direct, codable) = Self.bothPaths(ReceiptVerified.self, Array(text.utf8))
        #expect(direct == codable)
        #expect(direct.description.contains("invalid value at transaction.notification.renewal.expirationIntent"))
    }

    // MARK: JSON helpers

    static func removingNulls(_ value: JSONValue) -> JSONValue {
        guard case .object(let object) = value else { return value }
        return .object(JSONObject(members: object.members.filter { $0.value != .null }.mapValues(removingNulls)))
    }

    static func render(_ value: JSONValue) throws -> [UInt8] {
        Array(renderText(value).utf8)
    }

    static func renderText(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let bool): bool ? "true" : "false"
        case .integer(let integer): String(integer)
        case .number(let number): "\(number)"
        case .string(let string): String(decoding: try! ContractCoding.encode([string]).dropFirst().dropLast(), as: UTF8.self)
        case .array(let elements): "[" + elements.map(renderText).joined(separator: ",") + "]"
        case .object(let object):
            "{" + object.members.keys.sorted().map { renderText(.string($0)) + ":" + renderText(object.members[$0]!) }
                .joined(separator: ",") + "}"
        }
    }
}
