import Testing
@testable import IMTrace
