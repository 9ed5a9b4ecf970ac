/// A configuration value the pipeline cannot run with; the message names the key and the
/// accepted range (kafka-go `Validate()` style), so it can be shown to an operator as is.
public struct PipelineConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key, the accepted range and the value found.
    public var message: String

    /// Creates an error with its message.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
