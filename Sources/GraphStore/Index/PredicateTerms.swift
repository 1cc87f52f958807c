import Foundation

/// The comparisons of a predicate the planner can answer from an index: `keyPath op constant`,
/// joined by `&&`, read from Foundation's `Predicate` expression tree.
struct PredicateTerms {
    enum Operator {
        case equal, less, lessOrEqual, greater, greaterOrEqual

        /// The operator with its sides swapped (`5 < x` is `x > 5`).
        var flipped: Operator {
            switch self {
            case .equal: .equal
            case .less: .greater
            case .lessOrEqual: .greaterOrEqual
            case .greater: .less
            case .greaterOrEqual: .lessOrEqual
            }
        }
    }

    struct Term {
        let keyPath: AnyKeyPath
        let op: Operator
        let value: IndexValue
    }

    /// The recognised comparisons.
    private(set) var terms: [Term] = []
    /// Whether the predicate holds anything besides them (then it is evaluated on candidates).
    private(set) var hasResidual = false

    /// The terms of `predicate`; `nil` means no predicate (every object matches).
    init<E>(_ predicate: Predicate<E>?) {
        guard let predicate else { return }
        collect(predicate.expression)
    }

    private mutating func collect(_ expression: Any) {
        switch expression {
        case let conjunction as any PlannableConjunction:
            collect(conjunction.left)
            collect(conjunction.right)
        case let comparison as any PlannableComparison:
            guard let op = comparison.plannedOperator else {
                hasResidual = true
                return
            }
            if let term = Self.term(comparison.left, op, comparison.right) ?? Self.term(comparison.right, op.flipped, comparison.left) {
                terms.append(term)
            } else {
                hasResidual = true
            }
        default:
            hasResidual = true
        }
    }

    private static func term(_ keyPath: Any, _ op: Operator, _ constant: Any) -> Term? {
        guard let keyPath = keyPath as? any PlannableKeyPath, keyPath.isOnVariable,
              let constant = constant as? any PlannableValue,
              let value = IndexValue(constant: constant.constant), !value.isNaN
        else { return nil }
        return Term(keyPath: keyPath.anyKeyPath, op: op, value: value)
    }
}

// MARK: - Reading Foundation's expression types

protocol PlannableConjunction {
    var left: Any { get }
    var right: Any { get }
}

protocol PlannableComparison {
    var left: Any { get }
    var right: Any { get }
    var plannedOperator: PredicateTerms.Operator? { get }
}

protocol PlannableKeyPath {
    var anyKeyPath: AnyKeyPath { get }
    var isOnVariable: Bool { get }
}

protocol PlannableValue {
    var constant: Any { get }
}

protocol PlannableVariable {}

extension PredicateExpressions.Conjunction: PlannableConjunction {
    var left: Any { lhs }
    var right: Any { rhs }
}

extension PredicateExpressions.Equal: PlannableComparison {
    var left: Any { lhs }
    var right: Any { rhs }
    var plannedOperator: PredicateTerms.Operator? { .equal }
}

extension PredicateExpressions.Comparison: PlannableComparison {
    var left: Any { lhs }
    var right: Any { rhs }
    var plannedOperator: PredicateTerms.Operator? {
        switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        @unknown default: nil
        }
    }
}

extension PredicateExpressions.KeyPath: PlannableKeyPath {
    var anyKeyPath: AnyKeyPath { keyPath }
    var isOnVariable: Bool { root is any PlannableVariable }
}

extension PredicateExpressions.Value: PlannableValue {
    var constant: Any { value }
}

extension PredicateExpressions.Variable: PlannableVariable {}
