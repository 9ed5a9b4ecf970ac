import Foundation
import Kafka
import Pipeline

/// `receiptd entitlements`: what one owner has now, from the per-owner view (the support desk's
/// "I paid, where is my premium?").
struct EntitlementsCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "entitlements",
        abstract: "Print one owner's entitlements from entitlements.state (one JSON line each)",
        usage: """
        receiptd entitlements --bundle-id B --user-id U [--config FILE]... [--brokers LIST]

          --bundle-id B     the app's bundle id
          --user-id U       the app's user id
          --config FILE     configuration file (repeatable; topics, catalogue, Kafka settings)
          --brokers LIST    Kafka bootstrap servers (overrides kafka.bootstrapServers)

        Prints each entitlement-state/v1 value the owner has (entitlements named in the catalogue), one
        JSON line per entitlement, with "accessNow" added: hasAccess judged at this moment (access whose
        validUntil has passed has ended). Prints nothing, and says so on standard error, when the view
        holds nothing for the owner. Reads only the partitions those keys live in.
        """)

    var owner: OwnerKey
    var configFiles: [String]
    var brokers: String?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--bundle-id", "--user-id", "--config", "--brokers"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        guard let bundleId = parser.option("--bundle-id"), !bundleId.isEmpty, !bundleId.contains("/") else {
            throw ValidationError("--bundle-id is required (a bundle id never contains /)")
        }
        guard let userId = parser.option("--user-id"), !userId.isEmpty else { throw ValidationError("--user-id is required") }
        owner = OwnerKey(bundleId: bundleId, userId: userId)
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
    }

    func run() async throws -> Int32 {
        let configuration = try ConfigLoader.standard(files: configFiles, brokers: brokers).load()
        let catalogue = try configuration.productCatalogue()
        let topic = configuration.topics.entitlementState
        let admin = try KafkaAdminClient(bootstrapServers: configuration.bootstrapServerList,
                                         additionalProperties: configuration.kafka.properties)
        let partitions = try await admin.partitionCount(topic: topic)
        let reader = OwnerViewReader(reader: configuration.stateReader(for: "entitlements-cli"), topic: topic)
        let states = try await reader.states(of: owner, entitlements: Set(catalogue.products.map(\.entitlement)),
                                             partitions: partitions)
        guard !states.isEmpty else {
            printError("receiptd entitlements: nothing recorded for \(owner.encoded) in \(topic)")
            return 0
        }
        let now = Date()
        for state in states {
            guard var object = try JSONSerialization.jsonObject(with: Data(try ContractCoding.encode(state))) as? [String: Any]
            else { continue }
            object["accessNow"] = state.hasAccess && (state.validUntil.map { $0 > now } ?? true)
            let line = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: line, as: UTF8.self))
        }
        return 0
    }
}
