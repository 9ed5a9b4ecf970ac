/// Fulfil's outputs written directly (see ``ContractWritable``): each case as the message it carries,
/// as its `encode(to:)` does.
extension FulfilOutput: ContractWritable {
    var contractSizeEstimate: Int {
        switch self {
        case .event(let event): event.contractSizeEstimate
        case .ownerUpdate(let update): update.contractSizeEstimate
        case .consumptionRequest(let request): request.contractSizeEstimate
        }
    }

    func write(to writer: inout ContractJSONWriter) {
        switch self {
        case .event(let event): event.write(to: &writer)
        case .ownerUpdate(let update): update.write(to: &writer)
        case .consumptionRequest(let request): request.write(to: &writer)
        }
    }
}
