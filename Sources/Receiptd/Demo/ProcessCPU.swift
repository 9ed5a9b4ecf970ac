import Foundation

/// User plus system CPU seconds used so far by every thread of this process (benchmarks report
/// CPU per record, which a busy machine disturbs far less than wall-clock rates).
func processCPUSeconds() -> Double {
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Minor page faults so far in this process: each is a first touch of a page (a fresh heap page,
/// a growing buffer). On a virtual machine that hands freed memory back to its host, as the one the
/// benchmarks were measured on does, one costs 2 to 10 µs (docs/benchmarks.md, session 20), so the
/// benches report them next to CPU: a figure that moved with its faults moved with the machine's
/// memory, not with the code.
func processMinorFaults() -> Int {
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
    return usage.ru_minflt
}
