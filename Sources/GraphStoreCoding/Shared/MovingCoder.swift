/// A decoder or encoder that serves a whole document with one instance, standing at one place
/// in it at a time: a nested value is coded by moving the instance to that value's place and
/// coding path, and back.
protocol MovingCoder: AnyObject {
    /// What names a place in the document: a token, an object reference, an output slot.
    associatedtype Place

    /// The place the coder stands at now.
    var current: Place { get set }
    /// The coding path to ``current``.
    var path: CodingPath { get set }
}

extension MovingCoder {
    /// Runs `body` with the coder moved to `place` at `nestedPath`, then moves it back (also
    /// when `body` throws). The paths are swapped, not copied, so no reference is counted on
    /// the way.
    @inline(__always)
    func moved<Result>(to place: Place, path nestedPath: CodingPath, _ body: () throws -> Result) rethrows -> Result {
        let outerPlace = current
        var outerPath = nestedPath
        swap(&outerPath, &path)
        current = place
        defer {
            current = outerPlace
            swap(&outerPath, &path)
        }
        return try body()
    }
}
