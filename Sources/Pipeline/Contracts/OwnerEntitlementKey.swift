/// The key of the per-owner view: `bundleId/userId/entitlement`.
///
/// Unambiguous because bundle ids never contain `/` (ingest) and entitlement names never do (the
/// catalogue refuses them): the first `/` ends the bundle id, the last starts the entitlement,
/// and the user id (which may contain `/`) is what lies between.
public struct OwnerEntitlementKey: Sendable, Hashable, CustomStringConvertible {
    public var owner: OwnerKey
    public var entitlement: String

    public init(owner: OwnerKey, entitlement: String) {
        self.owner = owner
        self.entitlement = entitlement
    }

    /// Splits an encoded key; nil without two slashes.
    public init?(encoded: String) {
        guard let first = encoded.firstIndex(of: "/"), let last = encoded.lastIndex(of: "/"), first < last else { return nil }
        owner = OwnerKey(bundleId: String(encoded[..<first]), userId: String(encoded[encoded.index(after: first)..<last]))
        entitlement = String(encoded[encoded.index(after: last)...])
    }

    /// The key as written to Kafka (UTF-8 of this string).
    public var encoded: String { owner.encoded(then: entitlement) }

    public var description: String { encoded }
}
