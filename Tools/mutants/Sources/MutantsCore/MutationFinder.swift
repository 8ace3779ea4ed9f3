import SwiftOperators
import SwiftParser
import SwiftSyntax

/// A place in one file where a mutation applies, before ids are assigned.
public struct MutationPoint: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The expression at [start, end) is replaced by `replacement`.
        case expression(replacement: String)
        /// The statement at [start, end) is not executed.
        case removeStatement
        /// `code` runs before the statement at `start` (end == start).
        case insertBefore(code: String)
    }

    public var start: Int
    public var end: Int
    public var line: Int
    public var column: Int
    public var op: MutationOperator
    public var kind: Kind
    public var before: String
    public var after: String
    /// Distinguishes several mutants of one operator at one place (e.g. +1 / -1).
    public var variant: String
    /// The enclosing declaration, e.g. `ServerCore.admitSend`.
    public var function: String = ""
}

/// Finds mutation points in one source file. Skips bug-switch code paths (conditions that mention
/// `bugs.` or a `bN` flag, and the code they guard), debug support (`description`), code the
/// selector cannot reach (default arguments, `@inlinable`, patterns, attributes, `#if`), and the
/// statements whose removal cannot compile (in initialisers, closures, calls that never return).
public struct MutationFinder {
    public static let neverReturning: Set<String> = [
        "fatalError", "preconditionFailure", "precondition", "assert", "assertionFailure", "print",
        "debugPrint", "dump",
    ]
    /// Calls whose removal is debug output, not behaviour.
    public static let notBehaviour: Set<String> = ["note"]

    public init() {}

    public func points(in source: String) -> [MutationPoint] {
        let parsed = Parser.parse(source: source)
        let folded = OperatorTable.standardOperators.foldAll(parsed) { _ in }
        let converter = SourceLocationConverter(fileName: "", tree: folded)
        let visitor = Visitor(converter: converter)
        visitor.walk(folded)
        // Source order; at one place expressions before removals; stable by operator and variant.
        return visitor.found.sorted {
            ($0.start, -$0.end, $0.op, $0.variant) < ($1.start, -$1.end, $1.op, $1.variant)
        }
    }

    // MARK: - Bug-switch detection

    static func mentionsBugSwitch(_ text: String) -> Bool {
        if text.contains("bugs.") || text.contains("BugSwitch") { return true }
        // A flag copied out of the switches, e.g. `settings.b11`.
        var i = text.startIndex
        while let r = text.range(of: "b", range: i..<text.endIndex) {
            let before = r.lowerBound == text.startIndex ? nil : text[text.index(before: r.lowerBound)]
            var j = r.upperBound
            var digits = ""
            while j < text.endIndex, text[j].isNumber { digits.append(text[j]); j = text.index(after: j) }
            let after = j < text.endIndex ? text[j] : nil
            let boundaryBefore = before.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true
            let boundaryAfter = after.map { !($0.isLetter || $0.isNumber || $0 == "_") } ?? true
            if boundaryBefore, boundaryAfter, let n = Int(digits), (1...30).contains(n) { return true }
            i = r.upperBound
        }
        return false
    }

    /// A condition list that turns on a bug path when it holds (some element mentions a switch
    /// without negating it).
    static func positiveBugCondition(_ conditions: ConditionElementListSyntax) -> Bool {
        conditions.contains { el in
            let t = el.condition.trimmedDescription
            return mentionsBugSwitch(t) && !t.hasPrefix("!")
        }
    }

    static func negativeOnlyBugCondition(_ conditions: ConditionElementListSyntax) -> Bool {
        conditions.count == 1 && conditions.allSatisfy { el in
            let t = el.condition.trimmedDescription
            return mentionsBugSwitch(t) && t.hasPrefix("!")
        }
    }

    final class Visitor: SyntaxVisitor {
        let converter: SourceLocationConverter
        var found: [MutationPoint] = []

        init(converter: SourceLocationConverter) {
            self.converter = converter
            super.init(viewMode: .sourceAccurate)
        }

        // MARK: context

        /// Why a node may not be mutated, or nil.
        func excluded(_ node: some SyntaxProtocol) -> Bool {
            var child = Syntax(node)
            var cur = node.parent
            while let p = cur {
                if let c = p.as(IfConfigClauseSyntax.self), child.id == c.condition?.id { return true }
                if p.is(AttributeSyntax.self) || p.is(EnumCaseElementSyntax.self) || p.is(GenericArgumentClauseSyntax.self)
                    || p.is(SwitchCaseLabelSyntax.self) || p.is(ExpressionPatternSyntax.self)
                    || p.is(MatchingPatternConditionSyntax.self) || p.is(MacroExpansionExprSyntax.self) {
                    return true
                }
                if let param = p.as(FunctionParameterSyntax.self), child.id == param.defaultValue?.id { return true }
                // Bug-switch support types (e.g. `ClientBugs`): their numbers only matter with a switch on.
                if let d = p.asProtocol(NamedDeclSyntax.self), d.name.text.contains("Bugs") || d.name.text.contains("BugSwitch") {
                    return true
                }
                if let e = p.as(ExtensionDeclSyntax.self), e.extendedType.trimmedDescription.contains("Bugs") { return true }
                if let f = p.as(FunctionDeclSyntax.self) {
                    if f.attributes.contains(where: { a in
                        let t = a.trimmedDescription
                        return t.hasPrefix("@inlinable") || t.hasPrefix("@usableFromInline") || t.hasPrefix("@_transparent")
                    }) { return true }
                }
                if let v = p.as(VariableDeclSyntax.self) {
                    let names = v.bindings.map { $0.pattern.trimmedDescription }
                    if names.contains("description") || names.contains("debugDescription") { return true }
                    if v.attributes.contains(where: { $0.trimmedDescription.hasPrefix("@inlinable") }) { return true }
                }
                if let call = p.as(FunctionCallExprSyntax.self),
                   let name = call.calledExpression.as(DeclReferenceExprSyntax.self)?.baseName.text,
                   MutationFinder.neverReturning.contains(name) {
                    return true
                }
                // Bug-switch paths.
                if let el = p.as(ConditionElementSyntax.self), MutationFinder.mentionsBugSwitch(el.condition.trimmedDescription) {
                    return true
                }
                if let ifx = p.as(IfExprSyntax.self) {
                    if child.id == ifx.body.id, MutationFinder.positiveBugCondition(ifx.conditions) { return true }
                    if let e = ifx.elseBody, child.id == e.id, e.is(CodeBlockSyntax.self),
                       MutationFinder.negativeOnlyBugCondition(ifx.conditions) { return true }
                }
                if let t = p.as(TernaryExprSyntax.self), MutationFinder.mentionsBugSwitch(t.condition.trimmedDescription) {
                    return true
                }
                if let g = p.as(GuardStmtSyntax.self), child.id == g.body.id,
                   MutationFinder.negativeOnlyBugCondition(g.conditions) {
                    return true
                }
                if let list = p.as(CodeBlockItemListSyntax.self) {
                    // After `guard <bug switch on> else { … }`, the rest of the block is the bug path.
                    for item in list {
                        if item.id == child.id { break }
                        if let g = item.item.as(GuardStmtSyntax.self), MutationFinder.positiveBugCondition(g.conditions) {
                            return true
                        }
                    }
                }
                if let sw = p.as(SwitchCaseSyntax.self), case .case(let label) = sw.label,
                   let w = label.caseItems.first(where: { $0.whereClause != nil })?.whereClause,
                   MutationFinder.mentionsBugSwitch(w.condition.trimmedDescription),
                   !w.condition.trimmedDescription.hasPrefix("!") {
                    return true
                }
                child = p
                cur = p.parent
            }
            return false
        }

        /// Inside an initialiser or closure (statement removal there breaks definite
        /// initialisation or single-expression closures), or outside any function body.
        func statementContextOK(_ node: some SyntaxProtocol) -> Bool {
            var cur = node.parent
            while let p = cur {
                if p.is(ClosureExprSyntax.self) || p.is(InitializerDeclSyntax.self) || p.is(DeinitializerDeclSyntax.self) {
                    return false
                }
                if p.is(FunctionDeclSyntax.self) || p.is(AccessorDeclSyntax.self) { return true }
                if let b = p.as(PatternBindingSyntax.self), b.accessorBlock != nil { return true }
                cur = p.parent
            }
            return false
        }

        /// Somewhere the selector global can be read: inside a function, accessor, closure or a
        /// stored property's initial value.
        func expressionContextOK(_ node: some SyntaxProtocol) -> Bool {
            var cur = node.parent
            while let p = cur {
                if p.is(FunctionDeclSyntax.self) || p.is(AccessorDeclSyntax.self) || p.is(InitializerDeclSyntax.self)
                    || p.is(ClosureExprSyntax.self) || p.is(PatternBindingSyntax.self) || p.is(SubscriptDeclSyntax.self) {
                    return true
                }
                cur = p.parent
            }
            return false
        }

        func add(_ node: some SyntaxProtocol, _ op: MutationOperator, _ kind: MutationPoint.Kind,
                 before: String, after: String, variant: String = "") {
            let start = node.positionAfterSkippingLeadingTrivia.utf8Offset
            let end = node.endPositionBeforeTrailingTrivia.utf8Offset
            let loc = converter.location(for: node.positionAfterSkippingLeadingTrivia)
            found.append(MutationPoint(start: start, end: isInsertion(kind) ? start : end,
                                       line: loc.line, column: loc.column, op: op, kind: kind,
                                       before: before, after: after, variant: variant, function: enclosing(node)))
        }

        func enclosing(_ node: some SyntaxProtocol) -> String {
            var fn: String?
            var type: String?
            var cur = node.parent
            while let p = cur {
                if fn == nil {
                    if let f = p.as(FunctionDeclSyntax.self) { fn = f.name.text }
                    else if p.is(InitializerDeclSyntax.self) { fn = "init" }
                    else if let b = p.as(PatternBindingSyntax.self) { fn = b.pattern.trimmedDescription }
                    else if let s = p.as(SubscriptDeclSyntax.self) { fn = "subscript" + s.parameterClause.trimmedDescription }
                }
                if type == nil {
                    if let d = p.as(ExtensionDeclSyntax.self) { type = d.extendedType.trimmedDescription }
                    else if let d = p.as(StructDeclSyntax.self) { type = d.name.text }
                    else if let d = p.as(ClassDeclSyntax.self) { type = d.name.text }
                    else if let d = p.as(EnumDeclSyntax.self) { type = d.name.text }
                    else if let d = p.as(ActorDeclSyntax.self) { type = d.name.text }
                }
                cur = p.parent
            }
            return [type, fn].compactMap { $0 }.joined(separator: ".")
        }

        func isInsertion(_ k: MutationPoint.Kind) -> Bool {
            if case .insertBefore = k { return true }
            return false
        }

        // MARK: operators

        override func visit(_ node: InfixOperatorExprSyntax) -> SyntaxVisitorContinueKind {
            guard let opTok = node.operator.as(BinaryOperatorExprSyntax.self)?.operator else { return .visitChildren }
            let op = opTok.text
            let table: [String: (String, MutationOperator)] = [
                "<": ("<=", .boundary), "<=": ("<", .boundary), ">": (">=", .boundary), ">=": (">", .boundary),
                "==": ("!=", .relational), "!=": ("==", .relational), "&&": ("||", .relational), "||": ("&&", .relational),
                "+": ("-", .arithmetic), "-": ("+", .arithmetic),
            ]
            guard let (to, kind) = table[op], expressionContextOK(node), !excluded(node) else { return .visitChildren }
            let text = node.trimmedDescription
            if MutationFinder.mentionsBugSwitch(text) { return .visitChildren }
            // `+` on strings and arrays would change meaning or not compile; only numbers.
            if kind == .arithmetic, text.contains("\"") || text.contains("[") { return .visitChildren }
            let l = node.leftOperand.trimmedDescription, r = node.rightOperand.trimmedDescription
            let replacement = "\(l) \(to) \(r)"
            add(node, kind, .expression(replacement: replacement), before: text, after: replacement)
            return .visitChildren
        }

        override func visit(_ node: IntegerLiteralExprSyntax) -> SyntaxVisitorContinueKind {
            let text = node.literal.text
            let clean = text.replacingOccurrences(of: "_", with: "")
            let value: Int?
            if clean.hasPrefix("0x") { value = Int(clean.dropFirst(2), radix: 16) }
            else if clean.hasPrefix("0b") { value = Int(clean.dropFirst(2), radix: 2) }
            else if clean.hasPrefix("0o") { value = Int(clean.dropFirst(2), radix: 8) }
            else { value = Int(clean) }
            guard let v = value, expressionContextOK(node), !excluded(node) else { return .skipChildren }
            // A prefix `-` belongs to the literal (`-1`): leave it alone.
            if node.parent?.is(PrefixOperatorExprSyntax.self) == true { return .skipChildren }
            // All-ones values (255, 0xFFFF …) are type limits: +1 would not compile.
            if v >= 127, (v + 1) & v == 0 { return .skipChildren }
            // Shift amounts and the like beyond 64 bits are not worth it; neither are huge values.
            if v > 1 << 40 { return .skipChildren }
            add(node, .constant, .expression(replacement: String(v + 1)), before: text, after: String(v + 1), variant: "+1")
            if v > 0 {
                add(node, .constant, .expression(replacement: String(v - 1)), before: text, after: String(v - 1), variant: "-1")
            }
            return .skipChildren
        }

        // MARK: conditions

        func negate(_ conditions: ConditionElementListSyntax) {
            for el in conditions {
                guard case .expression(let e) = el.condition else { continue }
                guard expressionContextOK(e), !excluded(e) else { continue }
                let text = e.trimmedDescription
                if MutationFinder.mentionsBugSwitch(text) { continue }
                let replacement = "!(\(text))"
                add(e, .negateCondition, .expression(replacement: replacement), before: text, after: replacement)
            }
        }

        override func visit(_ node: IfExprSyntax) -> SyntaxVisitorContinueKind { negate(node.conditions); return .visitChildren }
        override func visit(_ node: GuardStmtSyntax) -> SyntaxVisitorContinueKind { negate(node.conditions); return .visitChildren }
        override func visit(_ node: WhileStmtSyntax) -> SyntaxVisitorContinueKind { negate(node.conditions); return .visitChildren }

        override func visit(_ node: TernaryExprSyntax) -> SyntaxVisitorContinueKind {
            let c = node.condition
            let text = c.trimmedDescription
            if expressionContextOK(c), !excluded(c), !MutationFinder.mentionsBugSwitch(text) {
                let replacement = "!(\(text))"
                add(c, .negateCondition, .expression(replacement: replacement), before: text, after: replacement)
            }
            return .visitChildren
        }

        // MARK: statements

        static func calledName(_ e: ExprSyntax) -> String? {
            var e = e
            while true {
                if let t = e.as(TryExprSyntax.self) { e = t.expression; continue }
                if let a = e.as(AwaitExprSyntax.self) { e = a.expression; continue }
                break
            }
            guard let call = e.as(FunctionCallExprSyntax.self) else { return nil }
            if let d = call.calledExpression.as(DeclReferenceExprSyntax.self) { return d.baseName.text }
            if let m = call.calledExpression.as(MemberAccessExprSyntax.self) { return m.declName.baseName.text }
            return ""
        }

        override func visit(_ node: CodeBlockItemSyntax) -> SyntaxVisitorContinueKind {
            guard case .expr(let e) = node.item else { return .visitChildren }
            let text = node.trimmedDescription
            var isAssignment = false
            if let infix = e.as(InfixOperatorExprSyntax.self) {
                if infix.operator.is(AssignmentExprSyntax.self) { isAssignment = true }
                if let b = infix.operator.as(BinaryOperatorExprSyntax.self), ["+=", "-=", "|=", "&=", "*="].contains(b.operator.text) {
                    isAssignment = true
                }
                // `_ = f()` keeps the call; removing it is a removed call.
            }
            let name = Self.calledName(e)
            guard isAssignment || name != nil else { return .visitChildren }
            // `let x: T` initialised later by this assignment: removing it cannot compile.
            if isAssignment, let infix = e.as(InfixOperatorExprSyntax.self) {
                if infix.leftOperand.is(TupleExprSyntax.self) { return .visitChildren }
                if let target = infix.leftOperand.as(DeclReferenceExprSyntax.self)?.baseName.text,
                   declaresDeferredLet(target, around: node) {
                    return .visitChildren
                }
            }
            if let n = name, MutationFinder.neverReturning.contains(n) || MutationFinder.notBehaviour.contains(n) { return .visitChildren }
            guard statementContextOK(node), !excluded(node), !MutationFinder.mentionsBugSwitch(text),
                  !isImplicitResult(node) else { return .visitChildren }
            // The only statement of a guard's else must stay (it may be the one that exits).
            // The item without its `;`, which must stay between the statements.
            add(node.item, .removeStatement, .removeStatement, before: node.item.trimmedDescription, after: "/* removed */")
            return .visitChildren
        }

        func declaresDeferredLet(_ name: String, around node: some SyntaxProtocol) -> Bool {
            var cur = node.parent
            while let p = cur {
                if p.is(FunctionDeclSyntax.self) || p.is(AccessorDeclSyntax.self) || p.is(InitializerDeclSyntax.self) {
                    let v = DeferredLets(viewMode: .sourceAccurate)
                    v.walk(p)
                    return v.names.contains(name)
                }
                cur = p.parent
            }
            return false
        }

        /// The only item of a block whose value is returned (a single-expression function or
        /// getter body, a branch of an `if`/`switch` used as an expression): not removable.
        func isImplicitResult(_ item: CodeBlockItemSyntax) -> Bool {
            guard let list = item.parent?.as(CodeBlockItemListSyntax.self), list.count == 1 else { return false }
            guard let holder = list.parent else { return false }
            if let block = holder.as(CodeBlockSyntax.self) {
                if let f = block.parent?.as(FunctionDeclSyntax.self) {
                    let ret = f.signature.returnClause?.type.trimmedDescription
                    return !(ret == nil || ret == "Void" || ret == "()")
                }
                if let a = block.parent?.as(AccessorDeclSyntax.self) {
                    return a.accessorSpecifier.text == "get"
                }
                // A branch of an if expression whose value is used.
                if let ifx = block.parent?.as(IfExprSyntax.self) { return isValue(Syntax(ifx)) }
                return false
            }
            // A getter without `get { }`: `var x: T { expr }`.
            if holder.is(AccessorBlockSyntax.self) { return true }
            // A switch case body: implicit result when the switch's value is used.
            if holder.is(SwitchCaseSyntax.self), let sw = holder.parent?.parent, sw.is(SwitchExprSyntax.self) {
                return isValue(sw)
            }
            return false
        }

        /// An `if`/`switch` whose value is used: inside an expression, or the only item of a
        /// block whose value is returned.
        func isValue(_ node: Syntax) -> Bool {
            var top = node
            while let up = top.parent, up.is(IfExprSyntax.self) { top = up }  // else-if chains
            guard let up = top.parent else { return false }
            if up.is(ExpressionStmtSyntax.self) {
                guard let item = up.parent?.as(CodeBlockItemSyntax.self) else { return false }
                return isImplicitResult(item)
            }
            if let item = up.as(CodeBlockItemSyntax.self) { return isImplicitResult(item) }
            return true
        }

        /// A plain value: a name, a member of a name, a number. Anything else (leading-dot
        /// members, string literals, calls) nearly always has a different type from its neighbour.
        static func plainArgument(_ e: ExprSyntax) -> Bool {
            if e.is(DeclReferenceExprSyntax.self) || e.is(IntegerLiteralExprSyntax.self) { return true }
            if let m = e.as(MemberAccessExprSyntax.self), let base = m.base { return plainArgument(base) }
            return false
        }

        override func visit(_ node: FunctionCallExprSyntax) -> SyntaxVisitorContinueKind {
            let args = Array(node.arguments)
            let unlabeled = args.indices.filter { args[$0].label == nil }
            guard unlabeled.count >= 2, expressionContextOK(node), !excluded(node) else { return .visitChildren }
            let name = Self.calledName(ExprSyntax(node)) ?? ""
            // Symmetric or never-returning calls.
            if ["min", "max", "print", "Set", "zip"].contains(name) || MutationFinder.neverReturning.contains(name) {
                return .visitChildren
            }
            let (i, j) = (unlabeled[0], unlabeled[1])
            guard Self.plainArgument(args[i].expression), Self.plainArgument(args[j].expression) else { return .visitChildren }
            let a = args[i].expression.trimmedDescription, b = args[j].expression.trimmedDescription
            if a == b || MutationFinder.mentionsBugSwitch(node.trimmedDescription) { return .visitChildren }
            var parts: [String] = []
            for (k, arg) in args.enumerated() {
                let expr = k == i ? b : k == j ? a : arg.expression.trimmedDescription
                parts.append(arg.label.map { "\($0.text): \(expr)" } ?? expr)
            }
            var replacement = "\(node.calledExpression.trimmedDescription)(\(parts.joined(separator: ", ")))"
            if let tc = node.trailingClosure { replacement += " " + tc.trimmedDescription }
            for extra in node.additionalTrailingClosures { replacement += " " + extra.trimmedDescription }
            add(node, .swapArguments, .expression(replacement: replacement), before: "(\(a), \(b))", after: "(\(b), \(a))")
            return .visitChildren
        }

        override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind {
            guard let body = node.body, let first = body.statements.first else { return .visitChildren }
            let ret = node.signature.returnClause?.type.trimmedDescription
            guard ret == nil || ret == "Void" || ret == "()" else { return .visitChildren }
            guard !excluded(first) else { return .visitChildren }
            if let g = first.item.as(GuardStmtSyntax.self), MutationFinder.positiveBugCondition(g.conditions) { return .visitChildren }
            add(first, .earlyReturn, .insertBefore(code: "if __imsimMutant == @ID@ { return }"),
                before: "func \(node.name.text)", after: "return at the start of \(node.name.text)")
            return .visitChildren
        }
    }
}

/// Names declared `let x: T` without a value (initialised later, once).
final class DeferredLets: SyntaxVisitor {
    var names: Set<String> = []
    override func visit(_ node: VariableDeclSyntax) -> SyntaxVisitorContinueKind {
        if node.bindingSpecifier.text == "let" {
            for b in node.bindings where b.initializer == nil {
                if let id = b.pattern.as(IdentifierPatternSyntax.self) { names.insert(id.identifier.text) }
            }
        }
        return .visitChildren
    }
}

extension MutationPoint {
    /// The source with only this mutation applied, as a reader would write it by hand.
    public func applied(to source: String) -> String {
        let b = Array(source.utf8)
        let head = String(decoding: b[..<start], as: UTF8.self)
        let tail = String(decoding: b[end...], as: UTF8.self)
        switch kind {
        case .expression(let replacement): return head + replacement + tail
        case .removeStatement: return head + tail
        case .insertBefore: return head + "return; " + tail
        }
    }
}
