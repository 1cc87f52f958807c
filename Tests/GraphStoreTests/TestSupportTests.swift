import Foundation
import GraphStoreTestSupport
import Testing

/// The test support's own guarantees, which other suites rely on.
@Suite struct TestSupportTests {
    @Test func withTimeoutEndsABodyThatDoesNotFinish() async throws {
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(seconds: 0.2) {
                // An hour-long body: the bound must end the wait, not the body.
                try? await Task.sleep(for: .seconds(3600))
                return 1
            }
        }
    }

    @Test func withTimeoutReturnsTheBodysValue() async throws {
        let value = try await withTimeout(seconds: 60) { 42 }
        #expect(value == 42)
    }

    @Test func withTimeoutPassesTheBodysError() async throws {
        struct Expected: Error {}
        await #expect(throws: Expected.self) {
            try await withTimeout(seconds: 60) { () async throws -> Int in throw Expected() }
        }
    }
}
