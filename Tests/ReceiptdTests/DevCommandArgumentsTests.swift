import Testing
@testable import Receiptd

/// `receiptd dev`'s options: repeatable overlays kept in order, `receiptd broker`'s default port,
/// and usage errors for anything else.
@Suite struct DevCommandArgumentsTests {
    @Test func defaultsToTheBrokersPortWithNoOverlays() throws {
        let command = try DevCommand(arguments: [])
        #expect(command.configFiles.isEmpty)
        #expect(command.port == 9092)
        #expect(!command.keep)
    }

    @Test func overlaysKeepTheirOrder() throws {
        let command = try DevCommand(arguments: ["--config", "a.json", "--port=0", "--config", "b.json", "--keep"])
        #expect(command.configFiles == ["a.json", "b.json"])
        #expect(command.port == 0)
        #expect(command.keep)
    }

    @Test(arguments: [["--port", "65536"], ["--port", "x"], ["--config"], ["--keep=yes"], ["--workers", "2"], ["extra"]])
    func rejectsInvalidArguments(_ arguments: [String]) {
        #expect(throws: ValidationError.self) { try DevCommand(arguments: arguments) }
    }

    @Test func workersDoNotInheritConfigurationVariables() {
        let environment = ["RECEIPTD_KAFKA_BOOTSTRAP_SERVERS": "prod:9092", "RECEIPTD_BINARY": "/bin/receiptd", "PATH": "/bin"]
        #expect(ConfigLoader.withoutConfigurationVariables(environment) == ["RECEIPTD_BINARY": "/bin/receiptd", "PATH": "/bin"])
    }
}
