import Foundation
import Testing
import GraphStoreTestSupport

@testable import GraphStore

@Suite struct GzipPartsTrailerTests {
    @Test(arguments: [Int32(-1), 0, 1, 2, 6, 9]) func everyLevelOddSizesAndHeader(level: Int32) throws {
        for extra in [0, 1, 7, 4095, 65_537] {
            let size = 2 * Gzip.minimumPartBytes + extra + Int(level + 1) * 12_345
            var data = FileLayerFixtures.compressibleText(atLeast: size / 2).prefix(size / 2)
            data += SplitMix64.bytes(size - data.count)
            for parts in [2, 3] {
                let inParts = try Gzip.compress(Data(data), level: level, parts: parts)
                let whole = try Gzip.compress(Data(data), level: level)
                #expect(GzipTests.fixedHeaderWithoutTable(inParts) == whole.prefix(10), "header, level \(level)")
                #expect(inParts.suffix(8) == whole.suffix(8), "trailer, level \(level) extra \(extra) parts \(parts)")
                #expect(try Gzip.decompress(inParts, maxOutputBytes: data.count) == data)
            }
        }
    }

    @Test func aSliceWithANonZeroStart() throws {
        let big = FileLayerFixtures.compressibleText(atLeast: 5 * Gzip.minimumPartBytes)
        let slice = big[big.startIndex + 12_345 ..< big.endIndex - 7]
        let inParts = try Gzip.compress(slice, level: 1, parts: 4)
        #expect(try Gzip.decompress(inParts, maxOutputBytes: slice.count) == Data(slice))
    }
}
