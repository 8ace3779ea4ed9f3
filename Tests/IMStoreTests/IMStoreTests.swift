import Testing
@testable import IMStore
