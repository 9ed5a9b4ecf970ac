import class Foundation.Thread

/// Starts long-running loops (librdkafka poll loops, socket forwarding) on their own OS
/// threads, so they never occupy a thread of Swift's cooperative pool.
enum DedicatedThread {
    /// Starts `body` on a new thread named `name`; the thread ends when `body` returns.
    /// - Parameters:
    ///   - name: The thread name (visible in debuggers and `top -H`).
    ///   - body: The loop to run.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }
}
