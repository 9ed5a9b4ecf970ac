/// A contract that writes its own compact JSON through a ``ContractJSONWriter``: the same bytes its
/// `Encodable` conformance gives through ``ContractJSONEncoder``, without the Codable machinery
/// (a tree of boxes, keys sorted by `String` comparison at write time), which profiles showed as
/// the largest single cost of the workers. ``ContractCoding/encode(_:)`` takes this path when a
/// value conforms.
///
/// A conformer writes one object: its members by hand in sorted key order (the order `String <`
/// gives for these ASCII names, which is how the Codable path sorts), optionals as explicit `null`.
///
/// - Important: A field added to a contract must be added to its writer too. The Codable
///   conformance stays the reference: the identity tests (`ContractWritingTests`) encode fully
///   populated values both ways and compare bytes, which is what catches a member the writer misses.
protocol ContractWritable {
    /// Writes this value as one JSON value (usually an object) at the writer's position.
    func write(to writer: inout ContractJSONWriter)

    /// Bytes to reserve for the whole message; a value carrying large text says so (default 1024).
    var contractSizeEstimate: Int { get }
}

extension ContractWritable {
    var contractSizeEstimate: Int { 1024 }

    /// The whole message: compact JSON bytes in one buffer.
    func contractJSON() -> [UInt8] {
        var writer = ContractJSONWriter(capacity: contractSizeEstimate)
        write(to: &writer)
        return writer.bytes
    }
}
