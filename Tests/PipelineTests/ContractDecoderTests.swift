import Foundation
import Testing
@testable import Pipeline

/// ContractJSONDecoder must decode every contract as Foundation's JSONDecoder does, and refuse
/// what it refuses with a `DecodingError`.
@Suite struct ContractDecoderTests {
    static func roundTrip<T: Codable>(_ value: T, _ type: T.Type) throws {
        let bytes = try ContractCoding.encode(value)
        let ours = try ContractJSONDecoder.decode(type, from: bytes)
        let theirs = try JSONDecoder().decode(type, from: Data(bytes))
        #expect(try ContractCoding.encode(ours) == ContractCoding.encode(theirs))
        #expect(try ContractCoding.encode(ours) == bytes)
    }

    @Test func everyContractSampleDecodesAsFoundationDoes() async throws {
        let samples = try await ContractSamples.make()
        for value in samples.ingested { try Self.roundTrip(value, IngestedSubmission.self) }
        for value in samples.verified { try Self.roundTrip(value, ReceiptVerified.self) }
        for value in samples.changes { try Self.roundTrip(value, EntitlementChanged.self) }
        for value in samples.ownerUpdates { try Self.roundTrip(value, OwnerPurchaseUpdate.self) }
        for value in samples.states { try Self.roundTrip(value, EntitlementState.self) }
        #expect(samples.verified.count + samples.changes.count + samples.states.count > 30)
    }

    struct Scalars: Codable, Equatable {
        var text: String
        var number: Double
        var float: Float
        var small: Int8
        var unsigned: UInt16
        var big: UInt64
        var integer: Int64
        var flag: Bool
        var missing: String?
        var list: [Int]
        var nested: [String: [String]]
        var data: Data
    }

    static let scalars = Scalars(text: "a \"quoted\" \\ line\n ✓", number: 0.1, float: 0.1, small: -8, unsigned: 65_535,
                                 big: UInt64(Int64.max), integer: Int64.min, flag: true, missing: nil, list: [1, -2, 3],
                                 nested: ["k": ["v", ""], "": []], data: Data([0, 1, 254, 255]))

    @Test func scalarsOfEveryWidthRoundTripAsFoundation() throws {
        try Self.roundTrip(Self.scalars, Scalars.self)
        #expect(try ContractJSONEncoder.encode(Self.scalars) == ContractEncoderTests.foundation(Self.scalars))
        #expect(try ContractJSONDecoder.decode(Scalars.self, from: ContractCoding.encode(Self.scalars)) == Self.scalars)
    }

    struct Required: Decodable {
        var name: String
        var count: Int8
    }

    @Test(arguments: [
        (#"{"count":1}"#, "keyNotFound"),
        (#"{"name":null,"count":1}"#, "valueNotFound"),
        (#"{"name":1,"count":1}"#, "typeMismatch"),
        (#"{"name":"a","count":300}"#, "dataCorrupted"),
        (#"{"name":"a","count":1.5}"#, "dataCorrupted"),
        (#"{"name":"a","name":"b","count":1}"#, "dataCorrupted"),
        (#"{"name":"a","count":1} trailing"#, "dataCorrupted"),
        (#"["name"]"#, "typeMismatch"),
    ])
    func refusalsAreDecodingErrors(_ json: String, _ kind: String) {
        do {
            _ = try ContractJSONDecoder.decode(Required.self, from: Array(json.utf8))
            Issue.record("decoded \(json)")
        } catch let error as DecodingError {
            let found = switch error {
            case .keyNotFound: "keyNotFound"
            case .valueNotFound: "valueNotFound"
            case .typeMismatch: "typeMismatch"
            case .dataCorrupted: "dataCorrupted"
            @unknown default: "unknown"
            }
            #expect(found == kind, "\(json)")
        } catch {
            Issue.record("\(json): not a DecodingError: \(error)")
        }
    }
}
