#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// A small TCP forwarder: accepts connections on a fixed local port and pipes each one to
/// a target address.
///
/// librdkafka 2.0.2's mock brokers listen on ephemeral ports; ``KafkaMockCluster/listen(bootstrapPort:host:)``
/// puts one of these in front of broker 1 so other processes can bootstrap from a stable
/// address. Clients only use it for the bootstrap connection (and later metadata requests);
/// they then connect directly to the brokers' advertised loopback ports.
///
/// One thread accepts, one thread per connection forwards with `poll(2)`; a self-pipe wakes
/// every thread on ``close()``.
final class LoopbackForwarder: Sendable {
    /// The bound `host:port` (the real port when 0 was requested).
    let address: String

    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let target: sockaddr_in
    private let threads = Mutex((running: 0, closed: false))
    private let allExited = DispatchSemaphore(value: 0)

    /// Binds `host:port` and starts accepting.
    /// - Parameters:
    ///   - host: An IPv4 address to listen on (usually `127.0.0.1`).
    ///   - port: The port, or 0 for an ephemeral one.
    ///   - targetHost: The IPv4 address to forward to.
    ///   - targetPort: The port to forward to.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/invalidArgument``) for a bad address or a
    ///   port that cannot be bound.
    init(host: String, port: UInt16, targetHost: String, targetPort: UInt16) throws {
        let listenAddress = try Self.socketAddress(host, port)
        target = try Self.socketAddress(targetHost, targetPort)

        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Self.error("socket") }
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bindAddress = listenAddress
        let bound = withUnsafePointer(to: &bindAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(listener, 128) == 0 else {
            let failure = Self.error("bind \(host):\(port)")
            Glibc.close(listener)
            throw failure
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            Glibc.close(listener)
            throw Self.error("pipe")
        }
        self.listener = listener
        self.wakeRead = pipeEnds[0]
        self.wakeWrite = pipeEnds[1]
        self.address = "\(host):\(UInt16(bigEndian: actual.sin_port))"
        startThread(name: "kafka-forwarder-accept") { forwarder in forwarder.acceptLoop() }
    }

    deinit {
        Glibc.close(listener)
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// Stops accepting, closes every forwarded connection and waits (up to 5 s) for the threads to end.
    func close() {
        let wasClosed = threads.withLock { state in
            defer { state.closed = true }
            return state.closed
        }
        guard !wasClosed else { return }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // never drained: every poll() sees it from now on
        shutdown(listener, Int32(SHUT_RDWR))
        _ = allExited.wait(timeout: .now() + .seconds(5))
    }

    // MARK: Threads

    private func startThread(name: String, _ body: @escaping @Sendable (LoopbackForwarder) -> Void) {
        threads.withLock { $0.running += 1 }
        DedicatedThread.start(name: name) { [self] in
            body(self)
            let done = threads.withLock { state in
                state.running -= 1
                return state.running == 0 && state.closed
            }
            if done { allExited.signal() }
        }
    }

    private func acceptLoop() {
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { return }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else {
                if fds[0].revents != 0 { return }
                continue
            }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            startThread(name: "kafka-forwarder-conn") { forwarder in forwarder.forward(client) }
        }
    }

    private func forward(_ client: Int32) {
        defer { Glibc.close(client) }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard upstream >= 0 else { return }
        defer { Glibc.close(upstream) }
        var address = target
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return }
        var one: Int32 = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(upstream, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))

        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var fds = [
            pollfd(fd: client, events: Int16(POLLIN), revents: 0),
            pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            for index in fds.indices { fds[index].revents = 0 }
            guard poll(&fds, 3, -1) >= 0 || errno == EINTR else { return }
            if fds[2].revents != 0 { return }
            for (from, to) in [(0, 1), (1, 0)] where fds[from].revents != 0 {
                let count = read(fds[from].fd, &buffer, buffer.count)
                guard count > 0, Self.writeAll(fds[to].fd, buffer, count) else { return }
            }
        }
    }

    private static func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var written = 0
        while written < count {
            let result = buffer.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + written, count - written, Int32(MSG_NOSIGNAL))
            }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    // MARK: Helpers

    private static func socketAddress(_ host: String, _ port: UInt16) throws -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw KafkaError.invalidArgument("\"\(host)\" is not an IPv4 address")
        }
        return address
    }

    private static func error(_ what: String) -> KafkaError {
        KafkaError.invalidArgument("\(what) failed: \(String(cString: strerror(errno)))")
    }
}
