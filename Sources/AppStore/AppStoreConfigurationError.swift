/// An invalid ``SignedDataVerifierConfiguration``, thrown by
/// ``SignedDataVerifierConfiguration/validate()`` and by ``SignedDataVerifier/init(configuration:clock:)``.
public struct AppStoreConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration key at fault, e.g. `trustAnchors` or `limits.maxJSONDepth`.
    public let key: String
    /// What is wrong and what is expected.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - key: The configuration key at fault.
    ///   - message: What is wrong and what is expected.
    public init(key: String, message: String) {
        self.key = key
        self.message = message
    }

    /// `invalid appstore configuration: key: message`.
    public var description: String { "invalid appstore configuration: \(key): \(message)" }
}
