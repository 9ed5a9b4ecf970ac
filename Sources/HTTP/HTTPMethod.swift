/// An HTTP request method.
///
/// A struct over the raw token rather than a closed enum, so a server can receive
/// (and a client can send) methods this module does not name without a breaking change.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token as sent on the wire, for example `"GET"`.
    public let rawValue: String

    /// Creates a method from its wire token; tokens are upper-cased because methods are case-sensitive
    /// on the wire and every standard method is upper-case.
    /// - Parameter rawValue: The method token, for example `"PATCH"`.
    public init(rawValue: String) {
        self.rawValue = rawValue.uppercased()
    }

    /// `GET`: fetch a resource (App Store Server API lookups).
    public static let get = HTTPMethod(rawValue: "GET")
    /// `POST`: submit a body (legacy `verifyReceipt`).
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`: replace a resource.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`: partially update a resource.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`: remove a resource.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `HEAD`: like `GET` but the response carries no body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS`: ask for the communication options of a resource.
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The wire token, so methods print naturally in logs.
    public var description: String { rawValue }
}
