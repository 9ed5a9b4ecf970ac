import Testing
@testable import AppStore

/// A key keeps its verify contexts for the next verification (``EVPKey``): a context used for a
/// signature that does not verify, or for a malformed one, must answer the next one as a fresh
/// context would, from any thread.
@Suite struct EVPKeyReuseTests {
    @Test func verificationsOnReusedContextsGiveEachSignatureItsOwnAnswer() async throws {
        let key = try EVPKey.generateEC()
        let first = SHA256Digest.hash(Array("first".utf8)), second = SHA256Digest.hash(Array("second".utf8))
        let signature = try first.withUnsafeBytes { try key.sign(digest: $0) }
        let malformed: [UInt8] = [0x30, 0x03, 0x02, 0x01]
        func verify(_ der: [UInt8], _ digest: [UInt8]) -> Bool {
            der.withUnsafeBytes { der in digest.withUnsafeBytes { key.verify(derSignature: der, digest: $0) } }
        }
        let answers = await withTaskGroup(of: [Bool].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    (0..<50).flatMap { _ in [verify(signature, first), verify(signature, second), verify(malformed, first)] }
                }
            }
            return await group.reduce(into: [Bool]()) { $0 += $1 }
        }
        #expect(answers.count == 600)
        #expect(answers == Array(repeating: [true, false, false], count: 200).flatMap { $0 })
    }
}
