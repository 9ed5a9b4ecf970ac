import Testing
@_spi(Testing) @testable import AppStore

@Suite struct JSONParserTests {
    private func parse(_ text: String, depth: Int = 16) throws(VerificationError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8), maxDepth: depth)
    }

    private func code(_ text: String, depth: Int = 16) -> String {
        do throws(VerificationError) {
            _ = try parse(text, depth: depth)
            return "valid"
        } catch {
            return error.reason.code
        }
    }

    @Test func parsesAllValueKinds() throws {
        let value = try parse(#" {"a":[1,-2,0,1.5,-0.25e2,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"],"b":{}} "#)
        guard case .object(let object) = value, case .array(let array)? = object["a"] else {
            Issue.record("unexpected shape")
            return
        }
        #expect(array[0] == .integer(1))
        #expect(array[1] == .integer(-2))
        #expect(array[2] == .integer(0))
        #expect(array[3] == .number(1.5))
        #expect(array[4] == .number(-25))
        #expect(array[5] == .bool(true))
        #expect(array[7] == .null)
        #expect(array[8] == .string("x\"\\/\u{8}\u{c}\n\r\té😀"))
        #expect(object["b"] == .object(JSONObject()))
    }

    @Test func integersAreExactInt64() throws {
        #expect(try parse("9223372036854775807") == .integer(.max))
        #expect(try parse("-9223372036854775808") == .integer(.min))
        #expect(try parse("9223372036854775808") == .number(9_223_372_036_854_775_808))
        #expect(try parse("1760592122788") == .integer(1_760_592_122_788))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "'a'", "01", "-", "1.", ".5", "+1", "1e", "1e+",
        "NaN", "Infinity", "tru", "nul", "[1 2]", "{\"a\":1}x", "\u{FEFF}{}", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"",
        "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\u{01}\"", "\"unterminated", "// c\n{}", "1e400",
    ])
    func rejectsInvalidJSON(_ text: String) {
        #expect(code(text) == "invalid-json", "\(text)")
    }

    @Test func rejectsInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22]] {
            #expect(throws: VerificationError.self) { try JSONParser.parse(bytes, maxDepth: 4) }
        }
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, #"{"a":1,"b":{"c":1,"c":1}}"#, #"{"a":1,"\u0061":2}"#, #"[{"x":null,"x":null}]"#,
    ])
    func rejectsDuplicateMembers(_ text: String) {
        #expect(code(text) == "duplicate-json-member")
    }

    @Test func boundsNesting() {
        #expect(code("[[[1]]]", depth: 3) == "valid")
        #expect(code("[[[[1]]]]", depth: 3) == "json-too-deep")
        #expect(code(#"{"a":{"b":{"c":{}}}}"#, depth: 3) == "json-too-deep")
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(code(deep) == "json-too-deep")
    }

    /// Names that share their length and their first and last eight bytes (one tag), before and
    /// after the object grows past the size at which names are also indexed.
    @Test(arguments: [3, JSONObject.indexThreshold, JSONObject.indexThreshold + 1, 200])
    func membersAreFoundAndDuplicatesRefusedAtEverySize(_ count: Int) throws {
        let names = (0..<count).map { "transaction-\(String(format: "%04d", $0))-identifier" }
        let text = "{" + names.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
        guard case .object(let object) = try parse(text) else {
            Issue.record("not an object")
            return
        }
        #expect(object.count == count)
        #expect(object.keys == names)
        for (position, name) in names.enumerated() { #expect(object[name] == .integer(Int64(position)), "\(name)") }
        #expect(object["transaction-9999-identifier"] == nil)
        #expect(object["transaction-"] == nil)
        for name in [names.first!, names[count / 2], names.last!] {
            let duplicated = String(text.dropLast()) + ",\"\(name)\":null}"
            #expect(code(duplicated) == "duplicate-json-member", "\(name) of \(count)")
        }
    }

    @Test func objectsAreEqualWhateverTheirMemberOrder() throws {
        let one = try parse(#"{"a":1,"bb":[true],"c":{"x":null,"y":"z"}}"#)
        let other = try parse(#"{"c":{"y":"z","x":null},"a":1,"bb":[true]}"#)
        #expect(one == other)
        #expect(one != (try parse(#"{"a":1,"bb":[true],"c":{"x":null,"y":"w"}}"#)))
        #expect(one != (try parse(#"{"a":1,"bb":[true]}"#)))
        #expect(JSONObject(members: ["a": .integer(1), "b": .null]) == JSONObject(members: ["b": .null, "a": .integer(1)]))
    }
}
