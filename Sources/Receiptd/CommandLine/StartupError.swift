/// A command could not start for a reason that is not a usage mistake (a port in use, a file that
/// cannot be read): printed as one `error:` line without the usage text, exit status 1.
struct StartupError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
