import Foundation

/// CPU and memory of the pipeline's processes over a measured window, from `/proc` (Linux): what
/// `bench pipeline` reports next to its rate, so a figure says whether the cores were busy and
/// what each receipt cost.
struct ResourceSample {
    /// CPU seconds (user + system) per process id.
    var cpu: [Int32: Double]
    /// Minor page faults (first touches of a page) per process id.
    var minorFaults: [Int32: Double]
    /// The whole machine: busy and total jiffies from `/proc/stat`.
    var machineBusy: Double
    var machineTotal: Double

    /// Samples `pids` (0 is this process) and the machine.
    static func take(_ pids: [Int32]) -> ResourceSample {
        var cpu: [Int32: Double] = [:]
        var minorFaults: [Int32: Double] = [:]
        for pid in pids { (cpu[pid], minorFaults[pid]) = counters(of: pid) }
        let (busy, total) = machineJiffies()
        return ResourceSample(cpu: cpu, minorFaults: minorFaults, machineBusy: busy, machineTotal: total)
    }

    /// utime + stime of a process in seconds, and its minor faults (fields 14, 15 and 10 of
    /// `/proc/<pid>/stat`, counted after the command name, which may hold spaces).
    static func counters(of pid: Int32) -> (cpuSeconds: Double, minorFaults: Double) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid == 0 ? "self" : String(pid))/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return (0, 0) }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]),
              let faults = Double(fields[7]) else { return (0, 0) }
        return ((user + system) / Double(sysconf(Int32(_SC_CLK_TCK))), faults)
    }

    /// Peak resident memory of a process in bytes (`VmHWM` of `/proc/<pid>/status`).
    static func peakResidentBytes(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid == 0 ? "self" : String(pid))/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes * 1024
    }

    private static func machineJiffies() -> (busy: Double, total: Double) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return (0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return (0, 0) }
        let total = values.prefix(8).reduce(0, +)  // user nice system idle iowait irq softirq steal
        let idle = values[3] + values[4]
        return (total - idle, total)
    }
}

/// What a measured window cost.
struct ResourceUsage {
    /// One worker process over the window.
    struct Worker {
        var name: String
        var cpuSeconds: Double
        /// Minor page faults over the window.
        var minorFaults: Double
        /// Peak resident memory (nil when `/proc` could not say).
        var peakResidentBytes: Int?
    }

    /// The workers, by name.
    var workers: [Worker]
    /// CPU seconds of this process (in the harnesses: embedded broker, generator, tally).
    var harnessCPUSeconds: Double
    /// Fraction of the machine's CPU time (all cores) that was busy over the window, any process.
    var machineBusyFraction: Double

    /// - Parameters:
    ///   - start: a sample of this process (pid 0) and of `workers`.
    ///   - end: the same, at the end of the window.
    ///   - workers: the worker processes' names by pid.
    init(from start: ResourceSample, to end: ResourceSample, workers names: [Int32: String]) {
        func cpu(_ pid: Int32) -> Double { max(0, (end.cpu[pid] ?? 0) - (start.cpu[pid] ?? 0)) }
        func faults(_ pid: Int32) -> Double { max(0, (end.minorFaults[pid] ?? 0) - (start.minorFaults[pid] ?? 0)) }
        workers = names.sorted { $0.value < $1.value }.map { pid, name in
            Worker(name: name, cpuSeconds: cpu(pid), minorFaults: faults(pid),
                   peakResidentBytes: ResourceSample.peakResidentBytes(of: pid))
        }
        harnessCPUSeconds = cpu(0)
        let total = end.machineTotal - start.machineTotal
        machineBusyFraction = total > 0 ? (end.machineBusy - start.machineBusy) / total : 0
    }
}
