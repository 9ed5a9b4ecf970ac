/// The members of one JSON object, wherever the document was read: on a ``JSONTape`` (its
/// position there), or in a parsed ``JSONObject`` when the tape left the document to the parser.
/// Readers that want a few members by name (the contracts' reader, ingest's field checks) look
/// them up alike through it.
public enum JSONMembers: Sendable {
    case tape(JSONTape, object: Int)
    case tree(JSONObject)

    /// The object of `bytes`: over a tape when it takes them, else parsed.
    /// - Parameter maxTapeMembers: ``JSONTape/init(_:maxDepth:maxMembers:)``'s limit.
    /// - Returns: the members, or the parsed value when it is not an object.
    /// - Throws: the parser's error when the bytes are not JSON.
    public static func read(_ bytes: [UInt8], maxDepth: Int,
                            maxTapeMembers: Int? = nil) throws(VerificationError) -> Result<JSONMembers, NotAnObject> {
        if let tape = JSONTape(bytes, maxDepth: maxDepth, maxMembers: maxTapeMembers) {
            guard tape.isObject(at: tape.root) else { return .failure(NotAnObject(value: tape.value(at: tape.root))) }
            return .success(.tape(tape, object: tape.root))
        }
        let value = try JSONParser.parse(bytes, maxDepth: maxDepth)
        guard case .object(let object) = value else { return .failure(NotAnObject(value: value)) }
        return .success(.tree(object))
    }

    /// A document whose value is not an object.
    public struct NotAnObject: Error, Sendable {
        public let value: JSONValue
    }

    /// The member's value, or nil when absent.
    public subscript(name: String) -> JSONValue? {
        // No closure over `tape`: capturing it retained its three arrays on every lookup.
        switch self {
        case .tape(let tape, let object):
            guard let position = tape.member(name, ofObjectAt: object) else { return nil }
            return tape.value(at: position)
        case .tree(let object): return object[name]
        }
    }
}
