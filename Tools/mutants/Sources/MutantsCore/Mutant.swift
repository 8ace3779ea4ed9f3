/// One mutation of the production code. `id` is the selector value (1…N, in sorted file order,
/// then source order); `key` names the same mutant independently of the others (file, position,
/// operator, variant) and is what equivalence files use.
public struct Mutant: Codable, Sendable, Equatable {
    public var id: Int
    public var key: String
    public var module: String
    /// Path relative to the package root, e.g. Sources/IMServer/ServerCore+Send.swift.
    public var file: String
    public var line: Int
    public var column: Int
    /// The enclosing declaration, e.g. `ServerCore.admitSend`.
    public var function: String
    public var op: MutationOperator
    public var before: String
    public var after: String
}

public enum MutationOperator: String, Codable, Sendable, CaseIterable, Comparable {
    /// `<` ↔ `<=`, `>` ↔ `>=`: off-by-one at a boundary.
    case boundary
    /// `==` ↔ `!=`, `&&` ↔ `||`.
    case relational
    /// `+` ↔ `-`.
    case arithmetic
    /// An integer literal N → N+1 or N-1.
    case constant
    /// An `if`/`guard`/`while` condition or a ternary's condition → its negation.
    case negateCondition = "negate-condition"
    /// A call or assignment statement removed.
    case removeStatement = "remove-statement"
    /// The first two unlabeled arguments of a call swapped.
    case swapArguments = "swap-arguments"
    /// `return` at the start of a function that returns nothing.
    case earlyReturn = "early-return"

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The generator's output: every mutant, and what was left out.
public struct MutantManifest: Codable, Sendable {
    public var root: String
    public var files: [String]
    public var mutants: [Mutant]
    /// Keys dropped because the schematised copy did not compile with them (type errors the
    /// generator cannot foresee without types, e.g. swapped arguments of different types).
    public var droppedUncompilable: [String]

    public init(root: String, files: [String], mutants: [Mutant], droppedUncompilable: [String] = []) {
        self.root = root
        self.files = files
        self.mutants = mutants
        self.droppedUncompilable = droppedUncompilable
    }
}
