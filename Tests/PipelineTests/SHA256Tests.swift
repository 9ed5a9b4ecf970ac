import Testing
@testable import Pipeline

@Suite struct SHA256Tests {
    @Test func emptyInput() {
        #expect(SHA256.hexDigest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func abc() {
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func twoBlockMessage() {
        #expect(SHA256.hexDigest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func oneMillionAs() {
        let input = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hexDigest(input) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func bytesAndTheirStringHashAlike() {
        let input = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(SHA256.hexDigest(input) == SHA256.hash(input).map { String(format: "%02x", $0) }.joined())
        #expect(SHA256.hexDigest(Array("receiptd".utf8)) == SHA256.hexDigest("receiptd"))
    }

    @Test func paddingBoundaries() {
        // 55, 56 and 64 bytes exercise the one-block/two-block padding edge.
        #expect(SHA256.hexDigest(String(repeating: "a", count: 55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256.hexDigest(String(repeating: "a", count: 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(SHA256.hexDigest(String(repeating: "a", count: 64)) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }
}
