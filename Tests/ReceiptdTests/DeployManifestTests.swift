import AppStore
import Foundation
import Pipeline
import Testing
@testable import Receiptd

/// Everything `Deploy/` references exists in the code: each manifest is parsed (PyYAML, which
/// `scripts/test` installs) and its ports, probe paths, scrape annotations, configuration keys and
/// `RECEIPTD_*` variables, commands, topic and group names, and the metric names of the alert
/// rules and the dashboard are checked against what receiptd actually serves, reads and registers.
@Suite struct DeployManifestTests {
    static let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Deploy")
    static let repository = deploy.deletingLastPathComponent()

    typealias Object = [String: Any]

    /// Every document of every YAML file under Deploy/, as JSON objects keyed by relative path.
    static func manifests() throws -> [String: [Object]] {
        let script = """
        import json, sys, yaml, pathlib
        root = pathlib.Path(sys.argv[1])
        out = {str(p.relative_to(root)): [d for d in yaml.safe_load_all(p.read_text()) if d is not None]
               for p in sorted(root.rglob('*.yaml')) if p.name != 'docker-compose.yaml'}
        print(json.dumps(out))
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, deploy.path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "parsing Deploy/ failed (python3-yaml installed?): \(problem)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: [Object]])
    }

    static func documents(_ all: [String: [Object]], kind: String) -> [Object] {
        all.filter { $0.key.hasPrefix("k8s/") }.sorted { $0.key < $1.key }.flatMap(\.value).filter { $0["kind"] as? String == kind }
    }

    static func name(_ object: Object) -> String { (object["metadata"] as? Object)?["name"] as? String ?? "" }

    /// The configuration the workers run with: the image's receiptd.json, the site overlay and the
    /// `RECEIPTD_*` ConfigMap, loaded by the real loader (an unknown key or variable throws).
    static func effectiveConfiguration(_ all: [String: [Object]]) throws -> (WorkerConfiguration, [String: String]) {
        let maps = documents(all, kind: "ConfigMap")
        let environment = try #require(maps.first { name($0) == "receiptd-env" }?["data"] as? [String: String])
        let site = try #require(maps.first { name($0) == "receiptd-site" }?["data"] as? [String: String])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-deploy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sitePath = directory.appendingPathComponent("receiptd.site.json").path
        try #require(site["receiptd.site.json"]).write(toFile: sitePath, atomically: true, encoding: .utf8)
        let cataloguePath = directory.appendingPathComponent("catalogue.json").path
        try #require(site["catalogue.json"]).write(toFile: cataloguePath, atomically: true, encoding: .utf8)
        _ = try ProductCatalogue(contentsOfFile: cataloguePath)
        let configuration = try ConfigLoader(files: [repository.appendingPathComponent("Config/receiptd.json").path, sitePath],
                                             environment: environment).load()
        return (configuration, environment)
    }

    @Test func workersProbesPortsAndConfigurationMatchTheCode() throws {
        let all = try Self.manifests()
        let (configuration, environment) = try Self.effectiveConfiguration(all)
        let allDeployments = Self.documents(all, kind: "Deployment")
        #expect(allDeployments.map(Self.name).sorted()
            == (StageName.allCases.map { "receiptd-\($0.rawValue)" } + ["receiptd-notifications"]).sorted())
        let deployments = allDeployments.filter(Self.isStage)
        let commands = Set(Receiptd.subcommands.map { $0.configuration.commandName })
        let configMaps = Set(Self.documents(all, kind: "ConfigMap").map(Self.name))
        for deployment in deployments {
            let label = Self.name(deployment)
            let template = try #require((deployment["spec"] as? Object)?["template"] as? Object)
            let pod = try #require(template["spec"] as? Object)
            let container = try #require((pod["containers"] as? [Object])?.first)
            let args = try #require(container["args"] as? [String])
            #expect(commands.contains(args[0]) && StageName(rawValue: args[0]) != nil, "\(label) runs \(args[0])")
            #expect(args.contains("/etc/receiptd/receiptd.json"), "\(label): the image's config (Dockerfile: COPY Config /etc/receiptd)")
            for reference in (container["envFrom"] as? [Object] ?? []).compactMap({ ($0["configMapRef"] as? Object)?["name"] as? String }) {
                #expect(configMaps.contains(reference), "\(label) reads ConfigMap \(reference)")
            }
            let ports = try #require(container["ports"] as? [Object])
            let metricsPort = try #require(ports.first { $0["name"] as? String == "metrics" }?["containerPort"] as? Int)
            #expect(metricsPort == configuration.observability.port, "\(label): containerPort vs observability.port")
            let liveness = try #require((container["livenessProbe"] as? Object)?["httpGet"] as? Object)
            let readiness = try #require((container["readinessProbe"] as? Object)?["httpGet"] as? Object)
            #expect(liveness["path"] as? String == OperationsServer.Paths.health && liveness["port"] as? String == "metrics", "\(label)")
            #expect(readiness["path"] as? String == OperationsServer.Paths.ready && readiness["port"] as? String == "metrics", "\(label)")
            let annotations = try #require((template["metadata"] as? Object)?["annotations"] as? [String: String])
            #expect(annotations["prometheus.io/scrape"] == "true", "\(label)")
            #expect(annotations["prometheus.io/port"] == String(configuration.observability.port), "\(label)")
            #expect(annotations["prometheus.io/path"] == OperationsServer.Paths.metrics, "\(label)")
            let grace = try #require(pod["terminationGracePeriodSeconds"] as? Int)
            #expect(Double(grace) > configuration.runner.shutdownGraceSeconds, "\(label): grace must exceed runner.shutdownGraceSeconds")
            let requests = try #require((container["resources"] as? Object)?["requests"] as? Object)
            #expect(requests["cpu"] != nil && requests["memory"] != nil, "\(label) requests resources")
        }
        #expect(environment.keys.allSatisfy { $0.hasPrefix("RECEIPTD_") })

        // The notification receiver serves Apple's POSTs and its health on notifications.port.
        let receiver = try #require(allDeployments.first { Self.name($0) == "receiptd-notifications" })
        let template = try #require((receiver["spec"] as? Object)?["template"] as? Object)
        let container = try #require(((template["spec"] as? Object)?["containers"] as? [Object])?.first)
        #expect((container["args"] as? [String])?.first == "notifications")
        let ports = try #require(container["ports"] as? [Object])
        #expect(ports.first { $0["name"] as? String == "http" }?["containerPort"] as? Int == configuration.notifications.port)
        for probe in ["livenessProbe", "readinessProbe"] {
            let get = try #require((container[probe] as? Object)?["httpGet"] as? Object)
            #expect(get["path"] as? String == configuration.notifications.healthPath && get["port"] as? String == "http", "\(probe)")
        }
    }

    static func isStage(_ deployment: Object) -> Bool {
        StageName(rawValue: String(name(deployment).dropFirst("receiptd-".count))) != nil
    }

    @Test func disruptionBudgetsScaledObjectsAndTopicsMatchTheStages() throws {
        let all = try Self.manifests()
        let (configuration, environment) = try Self.effectiveConfiguration(all)
        let topics = configuration.pipelineTopics
        let job = try #require(Self.documents(all, kind: "Job").first { Self.name($0) == "receiptd-create-topics" })
        let jobContainer = try #require(((((job["spec"] as? Object)?["template"] as? Object)?["spec"] as? Object)?["containers"] as? [Object])?.first)
        let command = try #require(jobContainer["command"] as? [String])
        #expect(command.count == 6 && command[1] == "/scripts/create-topics.sh", "\(command)")
        let partitions = try #require(Int(command[3]))
        #expect(Int(command[5]) == configuration.retry.tierDelaysSeconds.count, "retry tiers vs retry.tierDelaysSeconds")
        #expect(command[2] == "$(RECEIPTD_KAFKA_BOOTSTRAP_SERVERS)" && environment["RECEIPTD_KAFKA_BOOTSTRAP_SERVERS"] != nil)

        let budgets = Self.documents(all, kind: "PodDisruptionBudget")
        let scaled = Self.documents(all, kind: "ScaledObject")
        for deployment in Self.documents(all, kind: "Deployment").filter(Self.isStage) {
            let label = Self.name(deployment)
            let stage = try #require(StageName(rawValue: String(label.dropFirst("receiptd-".count))))
            let podLabels = try #require(((((deployment["spec"] as? Object)?["template"] as? Object)?["metadata"] as? Object)?["labels"] as? [String: String]))
            let budget = try #require(budgets.first { Self.name($0) == label }, "a PodDisruptionBudget for \(label)")
            let selector = try #require(((budget["spec"] as? Object)?["selector"] as? Object)?["matchLabels"] as? [String: String])
            #expect(selector.allSatisfy { podLabels[$0.key] == $0.value }, "\(label)'s budget selects its pods")
            let scaler = try #require(scaled.first { Self.name($0) == label }, "a ScaledObject for \(label)")
            let spec = try #require(scaler["spec"] as? Object)
            #expect((spec["scaleTargetRef"] as? Object)?["name"] as? String == label)
            let maximum = try #require(spec["maxReplicaCount"] as? Int)
            #expect(maximum <= partitions, "\(label): maxReplicaCount \(maximum) above \(partitions) partitions")
            #expect((spec["minReplicaCount"] as? Int ?? 0) >= 1)
            let trigger = try #require((spec["triggers"] as? [Object])?.first)
            #expect(trigger["type"] as? String == "kafka")
            let metadata = try #require(trigger["metadata"] as? [String: String])
            #expect(metadata["consumerGroup"] == configuration.groupId(for: stage), "\(label)")
            #expect(metadata["topic"] == topics.input(of: stage), "\(label)")
            #expect(metadata["excludePersistentLag"] == "true", "\(label)")
            #expect((Int(metadata["lagThreshold"] ?? "") ?? 0) > 0, "\(label): lagThreshold \(metadata["lagThreshold"] ?? "")")
            let fromEnv = try #require(metadata["bootstrapServersFromEnv"])
            #expect(environment[fromEnv] != nil, "\(label): \(fromEnv) is in receiptd-env")
        }

        // The topic script creates exactly the configured topics.
        let script = try String(contentsOf: Self.deploy.appendingPathComponent("create-topics.sh"), encoding: .utf8)
        func array(_ name: String) -> [String] {
            guard let line = script.split(separator: "\n").first(where: { $0.hasPrefix("\(name)=(") }) else { return [] }
            return line.dropFirst(name.count + 2).dropLast().split(separator: " ").map(String.init).filter { !$0.hasPrefix("\"$") }
        }
        let inputs = array("inputs"), others = array("topics")
        #expect(Set(inputs) == Set(StageName.allCases.map { topics.input(of: $0) }))
        #expect(Set(inputs + others) == Set(topics.allNames(retryTiers: 0)))

        // kustomization.yaml lists every manifest and every generated file exists.
        let kustomization = try #require(all["kustomization.yaml"]?.first)
        let resources = try #require(kustomization["resources"] as? [String])
        #expect(Set(resources) == Set(all.keys.filter { $0.hasPrefix("k8s/") }))
        for generator in kustomization["configMapGenerator"] as? [Object] ?? [] {
            for file in generator["files"] as? [String] ?? [] {
                #expect(FileManager.default.fileExists(atPath: Self.deploy.appendingPathComponent(file).path), "\(file)")
            }
        }
    }

    @Test func alertAndDashboardMetricsAreOnesReceiptdRegisters() throws {
        let all = try Self.manifests()
        let registered = try Self.registeredMetricNames()
        #expect(registered.contains("receiptd_stage_records_total") && registered.count > 20, "\(registered)")
        func check(_ expression: String, _ context: String) {
            for name in Self.metricNames(in: expression) {
                let family = ["_bucket", "_sum", "_count"].reduce(name) { $0.hasSuffix($1) && !registered.contains($0) ? String($0.dropLast($1.count)) : $0 }
                #expect(registered.contains(family), "\(context) uses \(name), which no code registers")
            }
            for reason in Self.labelValues("reason", in: expression) where reason.contains("appstore") || reason.contains("verify-receipt") {
                #expect(AppStoreFailureReason(code: reason) != nil, "\(context): reason \(reason) is no AppStoreFailureReason")
            }
        }
        let groups = try #require(all["prometheus/receiptd-alerts.yaml"]?.first?["groups"] as? [Object])
        let rules = groups.flatMap { $0["rules"] as? [Object] ?? [] }
        #expect(rules.count >= 8)
        for rule in rules {
            let expression = try #require(rule["expr"] as? String)
            check(expression, "alert \(rule["alert"] ?? "")")
            #expect(Self.metricNames(in: expression).isEmpty == false || expression.contains("up{"), "\(rule)")
        }
        let dashboard = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: Self.deploy.appendingPathComponent("grafana/receiptd-dashboard.json"))) as? Object)
        let panels = try #require(dashboard["panels"] as? [Object])
        #expect(panels.count >= 10)
        for panel in panels {
            let targets = try #require(panel["targets"] as? [Object])
            #expect(!targets.isEmpty)
            for target in targets { check(try #require(target["expr"] as? String), "panel \(panel["title"] ?? "")") }
        }
    }

    /// `receiptd_*` names in an expression.
    static func metricNames(in expression: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: "receiptd_[a-z_]+")
        let range = NSRange(expression.startIndex..., in: expression)
        return Set(regex.matches(in: expression, range: range).compactMap { Range($0.range, in: expression).map { String(expression[$0]) } })
    }

    /// Values given to `label` in an expression's matchers.
    static func labelValues(_ label: String, in expression: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: label + "=\"([^\"]+)\"")
        let range = NSRange(expression.startIndex..., in: expression)
        return regex.matches(in: expression, range: range).compactMap { Range($0.range(at: 1), in: expression).map { String(expression[$0]) } }
    }

    /// Every metric family name written as a string literal in Sources/ (the registry needs the
    /// literal name, so this is every family the code can register).
    static func registeredMetricNames() throws -> Set<String> {
        var names: Set<String> = []
        let sources = repository.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for name in metricNames(in: text) where text.contains("\"\(name)\"") { names.insert(name) }
        }
        return names
    }
}
