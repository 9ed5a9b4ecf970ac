/// The outcome of verifying a signed App Store payload: the decoded value, or why it was rejected.
///
/// Rejections are expected outcomes, so they are values rather than thrown errors (as in Apple's
/// App Store Server Library).
public enum VerificationResult<T: Sendable>: Sendable {
    /// The signature, chain and claims verified; the decoded payload.
    case valid(T)
    /// The input was rejected.
    case invalid(VerificationError)

    /// The decoded payload when valid, else `nil`.
    public var value: T? {
        if case .valid(let value) = self { return value }
        return nil
    }

    /// The error when invalid, else `nil`.
    public var error: VerificationError? {
        if case .invalid(let error) = self { return error }
        return nil
    }

    /// The payload, or throws the ``VerificationError``.
    /// - Throws: ``VerificationError`` when invalid.
    public func get() throws(VerificationError) -> T {
        switch self {
        case .valid(let value): return value
        case .invalid(let error): throw error
        }
    }
}

extension VerificationResult: Equatable where T: Equatable {}
