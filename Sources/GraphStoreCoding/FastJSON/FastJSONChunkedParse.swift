import Foundation

/// How a chunked parse treats the arrays of one member of the root object (a snapshot's
/// `entities`): each array's elements are parsed into small tapes of their own, a few
/// thousand tokens each, handed to `deliver` as soon as they are complete, so that no tape
/// of the whole document ever exists.
final class FastJSONChunking {
    /// The root member's key, as UTF-8.
    let member: [UInt8]
    /// A chunk is closed at the first element boundary at or past this many tokens.
    let tokensPerChunk: Int
    let deliver: (FastJSONChunk) -> Void
    /// How many objects under the member's key the root held (one, in a well-formed document).
    var chunkedObjects = 0
    /// The chunked arrays' names, in document order.
    var arrayNames: [String] = []
    /// The chunks delivered so far.
    var chunkCount = 0

    init(member: String, tokensPerChunk: Int, deliver: @escaping (FastJSONChunk) -> Void) {
        self.member = Array(member.utf8)
        self.tokensPerChunk = max(tokensPerChunk, 1)
        self.deliver = deliver
    }
}

/// Consecutive elements of one chunked array, parsed into a tape of their own: token 0 is an
/// array holding just these elements. Offsets (and syntax errors) count bytes of the whole
/// document.
///
/// Read by one thread at a time: a chunk is handed from the parsing thread to the one that
/// decodes it under the lock of ``FastJSONChunkedDecoder``'s pipeline, and the parser never
/// touches it again.
package final class FastJSONChunk: @unchecked Sendable {
    /// The name of the array (its key in the chunked member).
    package let array: String
    /// The index in the array of the chunk's first element.
    package let firstIndex: Int
    /// The chunk's position among all chunks of the document.
    package let sequence: Int
    let document: FastJSONDocument

    init(array: String, firstIndex: Int, sequence: Int, document: FastJSONDocument) {
        self.array = array
        self.firstIndex = firstIndex
        self.sequence = sequence
        self.document = document
    }

    /// How many elements the chunk holds.
    package var elementCount: Int { document.tokens[0].count }

    /// How many tokens its tape holds.
    package var tokenCount: Int { document.tokenCount }

    /// Calls `body` with an unkeyed container over the chunk's elements, decoding as
    /// ``FastJSONDecoder`` does (on this thread only). Coding paths start at the array, and
    /// element indexes at 0 for the chunk's first element.
    ///
    /// - Throws: what `body` throws.
    package func withElements<R>(
        userInfo: [CodingUserInfoKey: any Sendable], path: [any CodingKey],
        nonConformingFloats: FastJSONDecoder.NonConformingFloatStrings = .snapshot,
        _ body: (inout any UnkeyedDecodingContainer) throws -> R
    ) throws -> R {
        var codingPath = CodingPath.root
        for key in path { codingPath = codingPath.appending(codingKey: key) }
        let impl = FastJSONDecoderImpl(document: document, userInfo: userInfo, floats: nonConformingFloats, current: 0, path: codingPath)
        impl.recyclesObjects = true
        defer { impl.endRecycling() }
        var container: any UnkeyedDecodingContainer = try impl.unkeyedContainer(at: 0, path: codingPath)
        return try body(&container)
    }

    /// The distinct sets of non-null member names among the chunk's objects (see
    /// ``MemberNameSurvey``), with indexes in the whole array.
    package func distinctMemberNames() -> [MemberNames] {
        let impl = FastJSONDecoderImpl(document: document, userInfo: [:], floats: .snapshot, current: 0, path: .root)
        let container = FastJSONUnkeyedContainer(impl: impl, array: 0, count: elementCount, path: .root)
        return container.distinctMemberNames().map { MemberNames(names: $0.names, firstIndex: $0.firstIndex + firstIndex) }
    }
}

/// The document around the chunked arrays: a tape in which each chunked array is a token
/// with its element count and no elements.
package final class FastJSONChunkedOutline {
    let document: FastJSONDocument
    /// How many objects under the chunked member's key the root held.
    package let chunkedObjects: Int
    /// The chunked arrays' names, in document order.
    package let arrayNames: [String]

    init(document: FastJSONDocument, chunkedObjects: Int, arrayNames: [String]) {
        self.document = document
        self.chunkedObjects = chunkedObjects
        self.arrayNames = arrayNames
    }

    /// How many tokens the outline's tape holds.
    package var tokenCount: Int { document.tokenCount }

    /// Decodes a `T` from the outline. A chunked array reads as one of its element count
    /// whose elements must not be decoded (`count` only).
    ///
    /// - Throws: `DecodingError`, or what `T.init(from:)` throws.
    package func decode<T: Decodable>(_ type: T.Type, userInfo: [CodingUserInfoKey: any Sendable] = [:]) throws -> T {
        try FastJSONDecoder.decode(type, in: document, userInfo: userInfo, nonConformingFloats: .snapshot, parallel: false)
    }
}

extension FastJSONParser {
    /// Parses `input` as ``parse(_:maxDepth:)`` does, with the same checks and errors, except
    /// that the elements of each array that is a member of the root object's member `member`
    /// go to `deliver`, in order, as chunks of about `tokensPerChunk` tokens (never splitting
    /// an element), instead of into the returned tape.
    ///
    /// `input` must stay valid while any chunk is read.
    ///
    /// - Throws: ``FastJSONSyntaxError`` with the offset of the first offending byte; the
    ///   chunks delivered before it stand.
    /// - Complexity: O(`input.count`); the tapes held at once are the outline's and one chunk's.
    package static func parseChunked(
        _ input: UnsafeBufferPointer<UInt8>, member: String, tokensPerChunk: Int, maxDepth: Int = defaultMaxDepth,
        deliver: @escaping (FastJSONChunk) -> Void
    ) throws(FastJSONSyntaxError) -> FastJSONChunkedOutline {
        let chunking = FastJSONChunking(member: member, tokensPerChunk: tokensPerChunk, deliver: deliver)
        let document = try scan(input, maxDepth: maxDepth, chunking: chunking)
        return FastJSONChunkedOutline(document: document, chunkedObjects: chunking.chunkedObjects, arrayNames: chunking.arrayNames)
    }
}

extension FastJSONScanner {
    /// Whether the string token at `index` is the chunked member's key (counting such keys).
    mutating func isChunkedMemberKey(_ index: Int) -> Bool {
        guard let chunking, index >= 0 else { return false }
        let key = tokens[index]
        guard key.kind == .string, key.tag & FastJSONFlag.escaped == 0, key.length == chunking.member.count,
              chunking.member.withUnsafeBufferPointer({ memcmp(bytes + key.offset, $0.baseAddress!, key.length) == 0 }) else { return false }
        chunking.chunkedObjects += 1
        return true
    }

    /// Starts a chunked array, whose token was just appended after its key: its elements go
    /// to chunk tapes from here.
    mutating func beginChunks() {
        guard let chunking else { return }
        let key = tokens[count - 2]
        let span = UnsafeBufferPointer(start: bytes + key.offset, count: key.length)
        chunking.arrayNames.append(key.tag & FastJSONFlag.escaped == 0 ? String(decoding: span, as: UTF8.self) : FastJSONStrings.unescape(span))
        outer = (tokens, count, capacity)
        chunkDepth = depth
        chunkFirstElement = 0
        startChunkTape()
    }

    /// A fresh chunk tape, its token 0 kept for the chunk's array.
    private mutating func startChunkTape() {
        let tokensPerChunk = chunking.unsafelyUnwrapped.tokensPerChunk
        capacity = tokensPerChunk + tokensPerChunk / 4 + 64
        tokens = .allocate(capacity: capacity)
        count = 1
    }

    /// Hands the elements parsed since the last chunk over as a chunk (at an element
    /// boundary of the chunked array), and starts the next chunk's tape.
    mutating func flushChunk() {
        guard let chunking else { return }
        let parsed = stack[depth - 1].count
        let elements = parsed - chunkFirstElement
        guard elements > 0 else { return }
        tokens[0] = FastJSONToken(tag: FastJSONKind.array.rawValue, offset: 0, payload: UInt64(count) << 32 | UInt64(elements))
        reserve(1)
        tokens[count] = FastJSONToken(tag: FastJSONKind.null.rawValue, offset: 0, payload: 0)
        let document = FastJSONDocument(tokens: tokens, tokenCount: count, bytes: bytes, byteCount: n)
        let chunk = FastJSONChunk(array: chunking.arrayNames[chunking.arrayNames.count - 1], firstIndex: chunkFirstElement, sequence: chunking.chunkCount, document: document)
        chunking.chunkCount += 1
        chunkFirstElement = parsed
        startChunkTape()
        chunking.deliver(chunk)
    }

    /// Ends a chunked array at its closing bracket: the last chunk goes out and the outline's
    /// tape is back, for the array's token to be closed with its element count.
    mutating func endChunks() {
        flushChunk()
        tokens.deallocate()
        let outer = self.outer.unsafelyUnwrapped
        (tokens, count, capacity) = (outer.tokens, outer.count, outer.capacity)
        self.outer = nil
        chunkDepth = 0
    }
}
