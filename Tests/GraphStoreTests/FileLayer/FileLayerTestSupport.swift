import Foundation
import Testing

@testable import GraphStore
import GraphStoreTestSupport

// MARK: - Deterministic data

enum FileLayerFixtures {
    /// JSON-like, highly compressible text of at least `count` bytes.
    static func compressibleText(atLeast count: Int) -> Data {
        var text = "["
        var index = 0
        while text.utf8.count < count {
            text += #"{"id":\#(index),"kind":"node","name":"item-\#(index % 977)","edges":[\#(index &* 7 % 50_000)]},"#
            text += "\n"
            index += 1
        }
        return Data((text + "{}]").utf8)
    }

    /// Decompresses the gzip file at `url` with Python's `gzip` module.
    static func pythonGunzip(_ url: URL) async throws -> Data {
        try await pythonOutput(#"import gzip,sys; sys.stdout.buffer.write(gzip.decompress(open(sys.argv[1],"rb").read()))"#, [url.path])
    }
}

// MARK: - Error matching

extension FileLayerError {
    /// The errno of an `.io` error, else `nil`.
    var ioErrno: Int32? {
        if case let .io(_, _, code, _) = self { code } else { nil }
    }

    /// The operation of an `.io` error, else `nil`.
    var ioOperation: String? {
        if case let .io(operation, _, _, _) = self { operation } else { nil }
    }

    /// The path of an `.io` error, else `nil`.
    var ioPath: String? {
        if case let .io(_, path, _, _) = self { path } else { nil }
    }
}
