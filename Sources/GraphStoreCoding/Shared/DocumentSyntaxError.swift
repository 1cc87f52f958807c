/// The document format a ``DocumentSyntaxError`` is about.
package protocol DocumentSyntax {
    /// What the error's description calls a document of this format: `JSON` in
    /// "invalid JSON at byte 12: …".
    static var documentName: String { get }
}

/// Why bytes are not a readable document of `Syntax`, and where: the byte offset of the first
/// byte that cannot continue a valid document (its length when it ends too early).
///
/// Each format names its own instance (``FastJSONSyntaxError``, ``BPlistSyntaxError``), so
/// that a `catch` or an `as?` tells the formats apart.
package struct DocumentSyntaxError<Syntax: DocumentSyntax>: Error, Sendable, Equatable, CustomStringConvertible {
    package let offset: Int
    package let reason: String

    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    package var description: String { "invalid \(Syntax.documentName) at byte \(offset): \(reason)" }
}
