/// The record key for everything that belongs to one user of one app: `bundleId + "/" + userId`.
///
/// The encoding is unambiguous because ingest only accepts bundle ids made of ASCII letters,
/// digits, `-` and `.`: the first `/` always ends the bundle id, and the user id (which may
/// itself contain `/`) is everything after it. Keying by owner keeps one user's submissions and
/// entitlement changes in one partition, hence in order.
public struct OwnerKey: Sendable, Hashable, CustomStringConvertible {
    /// The app's bundle identifier (never contains `/`).
    public var bundleId: String
    /// The app's own user identifier (opaque; may contain `/`).
    public var userId: String

    /// Creates an owner key.
    public init(bundleId: String, userId: String) {
        self.bundleId = bundleId
        self.userId = userId
    }

    /// Splits an encoded key at its first `/`; nil when there is none.
    public init?(encoded: String) {
        guard let slash = encoded.firstIndex(of: "/") else { return nil }
        self.bundleId = String(encoded[..<slash])
        self.userId = String(encoded[encoded.index(after: slash)...])
    }

    /// The key as written to Kafka (UTF-8 of this string).
    public var encoded: String { encoded(then: nil) }

    /// The encoded key, followed by `/` and `suffix` when there is one (``OwnerEntitlementKey``).
    /// Built in one buffer: `a + "/" + b` allocates twice, and every output of fulfil and owners
    /// is keyed so.
    func encoded(then suffix: String?) -> String {
        var key = ""
        key.reserveCapacity(bundleId.utf8.count + 1 + userId.utf8.count + (suffix.map { $0.utf8.count + 1 } ?? 0))
        key += bundleId
        key += "/"
        key += userId
        if let suffix {
            key += "/"
            key += suffix
        }
        return key
    }

    public var description: String { encoded }
}
