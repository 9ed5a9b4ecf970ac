/// Access to nested objects of a payload (notification `data`, `summary`, …), with the strictness
/// of `JSONObject+Fields.swift`: `null` counts as absent, any other non-object is `invalid-field`.
extension JSONObject {
    func optionalNestedObject(_ key: String) throws(VerificationError) -> JSONObject? {
        switch self[key] {
        case .none, .some(.null):
            return nil
        case .some(.object(let object)):
            return object
        case .some(let value):
            throw VerificationError(.invalidField, "field \(key) must be an object, got \(value.typeName)")
        }
    }
}
